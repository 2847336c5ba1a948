"""The HuggingFace model suite: architectures built from their configs, random weights.

Nothing is downloaded: every model is ``ModelClass(ConfigClass(**overrides))``.  The list
follows PyTorch's HuggingFace benchmark list (benchmarks/dynamo/huggingface_models_list.txt):
the same names and batch sizes, and sequence lengths by the same family rules as its runner.
Entries that PyTorch builds from a hub config (T5Small, DistillGPT2, GoogleFnet,
YituTechConvBert, AllenaiLongformerBase) use configs written out here with the public
dimensions of those checkpoints; the LLM entries that PyTorch times with ``generate`` are
replaced by forward passes of LLaMA-style decoders with the public dimensions of
Llama-3.2-1B and Qwen3-0.6B (our choice: batch 8, 512 tokens).

``small=True`` gives tiny versions of the same architectures (2 layers, hidden 64, vocab
1024, batch 2, 32 tokens) that run on a CPU in seconds.

torchvision's classifiers (names ``tv_*``, model_benchmarks/vision_models.py) are resolved here
too: ``build_model``, ``model_inputs`` and ``shape`` take either kind of spec; ``SPECS`` and the
default list stay HuggingFace's, ``--models torchvision`` selects every torchvision entry.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from . import vision_models

SMALL_BATCH = 2
SMALL_SEQ = 32
SMALL_VOCAB = 1024


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    name: str  # the name in PyTorch's list (or ours for the LLaMA-style entries)
    cls: str  # transformers class
    batch_size: int
    seq_len: int
    config: dict[str, Any] = dataclasses.field(default_factory=dict)  # full-size overrides
    small: dict[str, Any] = dataclasses.field(default_factory=dict)  # extra overrides for --small
    # fp16/bf16 runs keep float32 weights and go through autocast (as --amp does), which runs ops without
    # 16-bit kernels in float32 (GoogleFnet: cuFFT's half-precision transforms need power-of-two sizes)
    half_autocast: bool = False

    @property
    def task(self) -> str:
        for suffix in ("QuestionAnswering", "SequenceClassification", "ConditionalGeneration"):
            if self.cls.endswith(suffix):
                return suffix
        return "LM"  # MaskedLM, CausalLM, LMHeadModel: labels per token


def _seq_len(name: str) -> int:
    """Sequence length by family, the rules of PyTorch's HuggingFace runner."""
    if name.startswith("Blenderbot"):
        return 128
    if name.startswith(("GPT2", "Bart", "T5", "PLBart", "MBart")) or name == "AllenaiLongformerBase":
        return 1024
    if name.startswith("OPT"):
        return 2048
    if name.startswith(("Albert", "Deberta", "Layout", "Electra", "XLNet", "MegatronBert", "Bert", "Roberta")):
        return 512
    if name in ("DistillGPT2", "GoogleFnet", "YituTechConvBert"):
        return 512
    if name == "TrOCRForCausalLM":
        return 256
    return 128  # MobileBert, and PyTorch's default for every other name


# name, transformers class, batch size (PyTorch's list), full-size config overrides
_TABLE: list[tuple[str, str, int, dict[str, Any]]] = [
    ("AlbertForMaskedLM", "AlbertForMaskedLM", 8, {}),
    ("AlbertForQuestionAnswering", "AlbertForQuestionAnswering", 8, {}),
    # allenai/longformer-base-4096
    ("AllenaiLongformerBase", "LongformerForMaskedLM", 8,
     dict(vocab_size=50265, max_position_embeddings=4098, type_vocab_size=1, attention_window=512)),
    ("BartForCausalLM", "BartForCausalLM", 8, {}),
    ("BartForConditionalGeneration", "BartForConditionalGeneration", 4, {}),
    ("BertForMaskedLM", "BertForMaskedLM", 32, {}),
    ("BertForQuestionAnswering", "BertForQuestionAnswering", 32, {}),
    ("BlenderbotForCausalLM", "BlenderbotForCausalLM", 32, {}),
    ("BlenderbotForConditionalGeneration", "BlenderbotForConditionalGeneration", 16, {}),
    ("BlenderbotSmallForCausalLM", "BlenderbotSmallForCausalLM", 256, {}),
    ("BlenderbotSmallForConditionalGeneration", "BlenderbotSmallForConditionalGeneration", 128, {}),
    ("CamemBert", "CamembertForMaskedLM", 32, {}),
    ("DebertaV2ForMaskedLM", "DebertaV2ForMaskedLM", 8, {}),
    ("DebertaV2ForQuestionAnswering", "DebertaV2ForQuestionAnswering", 8, {}),
    ("DistilBertForMaskedLM", "DistilBertForMaskedLM", 256, {}),
    ("DistilBertForQuestionAnswering", "DistilBertForQuestionAnswering", 512, {}),
    # distilgpt2: GPT-2 small with 6 layers
    ("DistillGPT2", "GPT2LMHeadModel", 32, dict(n_layer=6)),
    ("ElectraForCausalLM", "ElectraForCausalLM", 64, {}),
    ("ElectraForQuestionAnswering", "ElectraForQuestionAnswering", 128, {}),
    ("GPT2ForSequenceClassification", "GPT2ForSequenceClassification", 8, dict(pad_token_id=0)),
    ("GPTJForCausalLM", "GPTJForCausalLM", 1, {}),
    ("GPTJForQuestionAnswering", "GPTJForQuestionAnswering", 1, {}),
    ("GPTNeoForCausalLM", "GPTNeoForCausalLM", 32, {}),
    ("GPTNeoForSequenceClassification", "GPTNeoForSequenceClassification", 32, dict(pad_token_id=0)),
    ("GoogleFnet", "FNetForMaskedLM", 32, {}),  # FNetConfig() is google/fnet-base
    ("LayoutLMForMaskedLM", "LayoutLMForMaskedLM", 32, {}),
    ("LayoutLMForSequenceClassification", "LayoutLMForSequenceClassification", 32, {}),
    ("M2M100ForConditionalGeneration", "M2M100ForConditionalGeneration", 64, {}),
    ("MBartForCausalLM", "MBartForCausalLM", 8, {}),
    ("MBartForConditionalGeneration", "MBartForConditionalGeneration", 4, {}),
    ("MT5ForConditionalGeneration", "MT5ForConditionalGeneration", 32, {}),
    ("MegatronBertForCausalLM", "MegatronBertForCausalLM", 16, {}),
    ("MegatronBertForQuestionAnswering", "MegatronBertForQuestionAnswering", 16, {}),
    ("MobileBertForMaskedLM", "MobileBertForMaskedLM", 256, {}),
    ("MobileBertForQuestionAnswering", "MobileBertForQuestionAnswering", 256, {}),
    ("OPTForCausalLM", "OPTForCausalLM", 4, {}),
    ("PLBartForCausalLM", "PLBartForCausalLM", 16, {}),
    ("PLBartForConditionalGeneration", "PLBartForConditionalGeneration", 8, {}),
    ("PegasusForCausalLM", "PegasusForCausalLM", 128, {}),
    ("PegasusForConditionalGeneration", "PegasusForConditionalGeneration", 64, {}),
    # RobertaConfig() has 512 positions, but Roberta's position ids start after the padding index
    # (512 tokens need 514, as roberta-base has)
    ("RobertaForCausalLM", "RobertaForCausalLM", 32, dict(is_decoder=True, max_position_embeddings=514,
                                                          type_vocab_size=1)),
    ("RobertaForQuestionAnswering", "RobertaForQuestionAnswering", 32, dict(max_position_embeddings=514,
                                                                            type_vocab_size=1)),
    # T5Config() is t5-small; transformers 5 dropped its default decoder_start_token_id (t5's is 0)
    ("T5ForConditionalGeneration", "T5ForConditionalGeneration", 8, dict(decoder_start_token_id=0)),
    ("T5Small", "T5ForConditionalGeneration", 8, dict(decoder_start_token_id=0)),
    ("TrOCRForCausalLM", "TrOCRForCausalLM", 64, {}),
    ("XGLMForCausalLM", "XGLMForCausalLM", 32, {}),
    ("XLNetLMHeadModel", "XLNetLMHeadModel", 16, dict(use_mems_eval=False)),
    ("YituTechConvBert", "ConvBertForMaskedLM", 32, {}),  # ConvBertConfig() is conv-bert-base
]

# LLaMA-style decoders (PyTorch times generate() for its LLM entries; we time forward passes)
_LLM_TABLE: list[tuple[str, str, int, int, dict[str, Any]]] = [
    ("Llama-3.2-1B", "LlamaForCausalLM", 8, 512,
     dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
          num_attention_heads=32, num_key_value_heads=8, head_dim=64, max_position_embeddings=131072,
          rope_theta=500000.0, tie_word_embeddings=True, bos_token_id=128000, eos_token_id=128001)),
    ("Qwen3-0.6B", "Qwen3ForCausalLM", 8, 512,
     dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
          num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
          tie_word_embeddings=True)),
]

# --small: per-model changes on top of the generic shrinking in small_overrides()
_SMALL_EXTRA: dict[str, dict[str, Any]] = {
    "AllenaiLongformerBase": dict(attention_window=16, max_position_embeddings=SMALL_SEQ + 8),
    "GPTNeoForCausalLM": dict(attention_types=[[["global", "local"], 1]], window_size=16),
    "GPTNeoForSequenceClassification": dict(attention_types=[[["global", "local"], 1]], window_size=16),
    "MobileBertForMaskedLM": dict(embedding_size=32, intra_bottleneck_size=32, true_hidden_size=32,
                                  num_feedforward_networks=2),
    "MobileBertForQuestionAnswering": dict(embedding_size=32, intra_bottleneck_size=32,
                                           true_hidden_size=32, num_feedforward_networks=2),
    "GPTJForCausalLM": dict(rotary_dim=8),
    "GPTJForQuestionAnswering": dict(rotary_dim=8),
}

#: models whose 16-bit runs need autocast for some op (ModelSpec.half_autocast)
HALF_AUTOCAST = {"GoogleFnet"}
SPECS: dict[str, ModelSpec] = {}
for _name, _cls, _bs, _cfg in _TABLE:
    SPECS[_name] = ModelSpec(_name, _cls, _bs, _seq_len(_name), _cfg, _SMALL_EXTRA.get(_name, {}),
                             half_autocast=_name in HALF_AUTOCAST)
for _name, _cls, _bs, _seq, _cfg in _LLM_TABLE:
    SPECS[_name] = ModelSpec(_name, _cls, _bs, _seq, _cfg)

#: the default model list of ``--small`` (one per family kind: encoder, decoder, encoder-decoder, LLaMA-style)
SMALL_DEFAULT = ["BertForMaskedLM", "GPT2ForSequenceClassification", "T5Small", "Llama-3.2-1B"]

# attribute names, by role, that the generic shrinking sets
_LAYERS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers", "encoder_layers", "decoder_layers", "num_decoder_layers")
_WIDTH = ("hidden_size", "d_model", "n_embd", "dim", "word_embed_proj_dim", "pooler_hidden_size")
_HEADS = ("num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads", "decoder_attention_heads",
          "attention_heads")
_FFN = ("intermediate_size", "d_ff", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "d_inner", "n_inner", "hidden_dim")
_POSITIONS = ("max_position_embeddings", "n_positions", "n_ctx")
_TOKEN_IDS = ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id", "sep_token_id",
              "forced_eos_token_id", "forced_bos_token_id")


def _config_class(spec: ModelSpec):
    import transformers

    model_cls = getattr(transformers, spec.cls)
    return model_cls, model_cls.config_class


def small_overrides(spec: ModelSpec) -> dict[str, Any]:
    """Config overrides for the tiny version of `spec`: 2 layers, hidden 64, 4 heads, vocab 1024."""
    _, config_cls = _config_class(spec)
    defaults = {**config_cls().to_dict(), **spec.config}
    out: dict[str, Any] = {}
    for key, value in defaults.items():
        if key in _LAYERS and isinstance(value, int):
            out[key] = 2
        elif key in _WIDTH and isinstance(value, int):
            out[key] = 64
        elif key in _HEADS and isinstance(value, int):
            out[key] = 4
        elif key == "num_key_value_heads" and isinstance(value, int):
            out[key] = 2
        elif key in ("head_dim", "d_kv", "d_head") and isinstance(value, int):
            out[key] = 16
        elif key == "embedding_size" and isinstance(value, int):
            out[key] = 32 if value < defaults.get("hidden_size", 0) else 64
        elif key in _FFN and isinstance(value, int):
            out[key] = 128
        elif key == "vocab_size":
            out[key] = SMALL_VOCAB
        elif key in _POSITIONS and isinstance(value, int):
            out[key] = max(128, 2 * SMALL_SEQ)
        elif key == "max_2d_position_embeddings":
            out[key] = 128
        elif key in _TOKEN_IDS and isinstance(value, int) and value >= SMALL_VOCAB:
            out[key] = {"pad_token_id": 0, "bos_token_id": 1}.get(key, 2)
        elif key in _TOKEN_IDS and isinstance(value, list):
            out[key] = [v if v < SMALL_VOCAB else 2 for v in value]
    out.update(spec.small)
    return out


def build_config(spec: ModelSpec, small: bool = False):
    """The transformers config object of `spec` (dropout kept in the graph at p=1e-30, no KV cache)."""
    _, config_cls = _config_class(spec)
    kwargs = dict(spec.config)
    if small:
        kwargs.update(small_overrides(spec))
    config = config_cls(**kwargs)
    # keep the dropout ops but make them (almost) the identity, so that eager and compiled runs,
    # whose random streams differ, compute the same function (PyTorch's harness does the same)
    for key, value in config.to_dict().items():
        if "drop" in key and isinstance(value, float) and value > 0 and "layerdrop" not in key:
            setattr(config, key, 1e-30)
    for key in ("encoder_layerdrop", "decoder_layerdrop", "layerdrop"):
        if hasattr(config, key):
            setattr(config, key, 0.0)  # layerdrop skips layers at random: never
    if hasattr(config, "use_cache"):
        config.use_cache = False
    return config


def shape(spec: ModelSpec | vision_models.VisionSpec, small: bool = False) -> tuple[int, int]:
    """(batch size, sequence length); torchvision models: (batch size, image side)."""
    if isinstance(spec, vision_models.VisionSpec):
        return vision_models.shape(spec, small)
    return (SMALL_BATCH, SMALL_SEQ) if small else (spec.batch_size, spec.seq_len)


def build_model(spec: ModelSpec | vision_models.VisionSpec, small: bool = False,
                device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32,
                seed: int = 0) -> torch.nn.Module:
    """Instantiate the model with random weights (seeded) on `device` (``"meta"`` allocates nothing)."""
    if isinstance(spec, vision_models.VisionSpec):
        return vision_models.build_model(spec, small, device, dtype, seed)
    model_cls, _ = _config_class(spec)
    config = build_config(spec, small)
    torch.manual_seed(seed)
    with torch.device(device):
        model = model_cls(config)
    # some models ignore the default device (XLNet builds its attention weights with
    # torch.FloatTensor(...), always on the CPU): move whatever stayed behind
    return model.to(device=device, dtype=dtype)


def make_inputs(spec: ModelSpec, config, small: bool = False, device: str | torch.device = "cpu",
                seed: int = 0) -> dict[str, torch.Tensor]:
    """Random token ids plus labels, so that the output has a loss (as PyTorch's runner does)."""
    batch, seq = shape(spec, small)
    gen = torch.Generator().manual_seed(seed)
    vocab = config.vocab_size

    def randint(high: int, size: tuple[int, ...]) -> torch.Tensor:
        return torch.randint(0, high, size, generator=gen, dtype=torch.int64).to(device)

    ids = randint(vocab, (batch, seq))
    if "Bart" in spec.name and getattr(config, "eos_token_id", None) is not None:
        ids[:, -1] = config.eos_token_id
    inputs = {"input_ids": ids}
    if spec.task == "QuestionAnswering":
        inputs["start_positions"] = randint(seq, (batch,))
        inputs["end_positions"] = randint(seq, (batch,))
    elif spec.task == "SequenceClassification":
        inputs["labels"] = randint(config.num_labels, (batch,))
    elif spec.task == "ConditionalGeneration":
        inputs["labels"] = randint(vocab - 1, (batch, seq))  # the decoder input is the labels shifted right
    else:
        inputs["labels"] = randint(vocab, (batch, seq))
    return inputs


def model_inputs(spec: ModelSpec | vision_models.VisionSpec, model: torch.nn.Module, small: bool = False,
                 device: str | torch.device = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """The keyword inputs of `model` (built from `spec`), labels included."""
    if isinstance(spec, vision_models.VisionSpec):
        return vision_models.make_inputs(spec, model, small, device, seed=seed)
    return make_inputs(spec, model.config, small, device, seed)


#: selectors for --models besides the names: every HuggingFace model, every torchvision model
SELECTORS = {"all": lambda: list(SPECS), "torchvision": lambda: list(vision_models.SPECS)}


def _expand(name: str) -> list[str]:
    """The model names `name` stands for: a selector's list (or its ``:K/N`` part), else the name itself."""
    selector, _, part = name.partition(":")
    if selector not in SELECTORS:
        return [name]
    names = SELECTORS[selector]()
    if not part:
        return names
    try:
        k, n = (int(x) for x in part.split("/"))
        if not 1 <= k <= n:
            raise ValueError
    except ValueError:
        raise SystemExit(f"bad part {part!r} in {name!r}: want K/N with 1 <= K <= N, e.g. {selector}:1/2") from None
    size = -(-len(names) // n)
    return names[(k - 1) * size:k * size]


def find(name: str) -> ModelSpec | vision_models.VisionSpec:
    """The spec named `name`, HuggingFace's or torchvision's (KeyError if neither)."""
    return SPECS[name] if name in SPECS else vision_models.SPECS[name]


def resolve(names: list[str] | None, small: bool) -> list[ModelSpec | vision_models.VisionSpec]:
    """Specs for `names` (None: the default list; ``all``: every HuggingFace model; ``torchvision``:
    every torchvision model; a selector with ``:K/N``, e.g. ``all:1/2``: its K-th of N consecutive parts,
    for runs split over machines or calls); unknown names raise, and so do torchvision names without
    torchvision."""
    if not names:
        names = SMALL_DEFAULT if small else list(SPECS)
    names = list(dict.fromkeys(n for name in names for n in _expand(name)))
    known = {**SPECS, **vision_models.SPECS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(known)}, and the selectors "
                         f"{', '.join(SELECTORS)}")
    if any(n in vision_models.SPECS for n in names):
        vision_models.import_torchvision()  # stops here, naming the package, when it is missing
    return [known[n] for n in names]
