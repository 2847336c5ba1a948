"""model_benchmarks' torchvision entries (tv_*): the list, the selectors, full-size builds on meta,
and tiny models through the runner under the tile backend (inference and training).  The tests
that build models skip without torchvision; CI has none (see .ci/run).  On a CPU machine, PyPI's
torchvision (a CUDA build) can be installed apart, ``pip install --no-deps --target DIR
torchvision==0.28.0`` for torch 2.13, with DIR on PYTHONPATH for this file alone (beside a CPU torch,
transformers' model imports fail on it unless model_benchmarks.vision_models imported it first)."""

from __future__ import annotations

import contextlib
import importlib.util
import io

import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("tqdm")

from model_benchmarks import __main__ as cli  # noqa: E402
from model_benchmarks import backends, models, runner, vision_models  # noqa: E402


# looked up, not imported, while collecting: the other test files of a worker run without torchvision loaded
needs_torchvision = pytest.mark.skipif(importlib.util.find_spec("torchvision") is None,
                                       reason="needs the torchvision package")


def test_list_and_selectors_name_the_torchvision_models():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["--list"]) == 0
    text = out.getvalue()
    assert "tv_resnet50" in text and "tv_swin_t" in text and "image 224x224" in text
    assert "BertForMaskedLM" in text
    # `all` stays HuggingFace's list; `torchvision` is every tv_* entry
    assert not any(n.startswith(vision_models.PREFIX) for n in models.SELECTORS["all"]())
    assert models.SELECTORS["torchvision"]() == list(vision_models.SPECS)
    with pytest.raises(SystemExit, match="unknown model"):
        models.resolve(["tv_not_a_model"], small=True)


def test_missing_torchvision_is_an_error_naming_the_package(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_torchvision(name, *args, **kwargs):
        if name == "torchvision" or name.startswith("torchvision."):
            raise ModuleNotFoundError("No module named 'torchvision'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torchvision)
    with pytest.raises(SystemExit, match="need torchvision"):
        models.resolve(["tv_resnet50"], small=False)
    assert [s.name for s in models.resolve(["BertForMaskedLM"], small=False)] == ["BertForMaskedLM"]


@needs_torchvision
@pytest.mark.parametrize("name", list(vision_models.SPECS))
def test_full_size_model_builds_on_meta(name):
    spec = vision_models.SPECS[name]
    model = models.build_model(spec, small=False, device="meta", dtype=torch.float16)
    assert sum(p.numel() for p in model.parameters()) > 4e6
    assert all(t.device.type == "meta" for t in [*model.parameters(), *model.buffers()])
    inputs = models.model_inputs(spec, model, small=False, device="meta")
    assert inputs["pixel_values"].shape == (spec.batch_size, 3, 224, 224)
    assert inputs["pixel_values"].dtype == torch.float16 and inputs["labels"].shape == (spec.batch_size,)
    assert models.shape(spec) == (spec.batch_size, 224)


@needs_torchvision
def test_small_models_run_eagerly_with_sensible_outputs():
    """Every --small variant gives finite logits of a sensible size in eval mode (batch-norm statistics
    set from a forward: fresh ones shrink or blow up the activations) and a finite loss and gradients
    in training mode."""
    for spec in vision_models.SPECS.values():
        model = models.build_model(spec, small=True)
        inputs = models.model_inputs(spec, model, small=True)
        assert inputs["pixel_values"].shape == (2, 3, 32, 32)
        with torch.no_grad():
            logits = model.eval()(**inputs).logits
        assert logits.shape == (2, vision_models.SMALL_CLASSES), spec.name
        assert torch.isfinite(logits).all() and 1e-3 < logits.abs().max() < 1e3, (spec.name, logits)
        out = model.train()(**inputs)
        out.loss.backward()
        assert torch.isfinite(out.loss), spec.name
        assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None), spec.name


@needs_torchvision
@pytest.mark.parametrize("mode", ["inference", "training"])
def test_tiny_convnet_and_vit_under_tile_match_eager(mode):
    """A ConvNeXt (depthwise convolutions, channel layer norm, layer scale, stochastic depth) and a ViT
    (patch convolution, attention) through the runner: compiled by tile, checked against eager
    (training: loss and every gradient after a step, from the same weights)."""
    settings = runner.RunSettings(mode=mode, precision="fp32", amp=False, device=torch.device("cpu"), small=True,
                                  repeats=1, warmup=0, cudagraphs=False, accuracy="fp64")
    backend_list = [backends.BACKENDS["eager"], backends.BACKENDS["tile"]]
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for name in ("tv_convnext_tiny", "tv_vit_b_16"):
            rows = {r["backend"]: r for r in runner.run_model(models.find(name), settings, backend_list)}
            tile = rows["tile"]
            assert tile["status"] == "ok" and tile["accuracy"] == "pass", (name, tile["reason"])
            assert tile["kernels"] > 0 and tile["fallback_nodes"] == 0, (name, tile)
            assert (tile["batch_size"], tile["seq_len"]) == (2, 32)
            assert rows["eager"]["status"] == "ok"
    finally:
        torch.set_num_threads(before)
