"""`python -m inductor_tile.demo`: a small HuggingFace model under torch.compile(backend="tile").

Builds the model from its config with random weights (nothing is downloaded), runs it eagerly,
compiles it with ``backend="tile"`` on the available device (CUDA if there is one, else the
CPU), checks the compiled output against eager, and prints the compile time, the time per
forward pass next to eager (and Inductor with ``--inductor``), and how many tile kernels
were generated or fell back to Inductor's own.  ``python -m inductor_tile.kernel_demo`` runs
hand-written tile kernels instead.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

import torch

import inductor_tile
from inductor_tile import metrics

FAMILIES = ("gpt2", "bert", "llama")


def build_model(family: str, layers: int, hidden: int, vocab: int, max_len: int) -> torch.nn.Module:
    try:
        import transformers
    except ImportError:
        raise SystemExit("the demo builds a HuggingFace model: pip install -e '.[benchmarks]'") from None
    heads = max(1, hidden // 32)
    if family == "gpt2":
        cfg = transformers.GPT2Config(n_embd=hidden, n_layer=layers, n_head=heads, vocab_size=vocab,
                                      n_positions=max_len, bos_token_id=0, eos_token_id=0)
        model = transformers.GPT2LMHeadModel(cfg)
    elif family == "bert":
        cfg = transformers.BertConfig(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                                      intermediate_size=4 * hidden, vocab_size=vocab, max_position_embeddings=max_len)
        model = transformers.BertForMaskedLM(cfg)
    else:
        cfg = transformers.LlamaConfig(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                                       num_key_value_heads=heads, intermediate_size=4 * hidden, vocab_size=vocab,
                                       max_position_embeddings=max_len)
        model = transformers.LlamaForCausalLM(cfg)
    return model.eval()


def time_per_call(fn, device: str, repeats: int) -> float:
    """Median seconds per call, after one warm-up call."""
    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    fn()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inductor_tile.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=FAMILIES, default="gpt2")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", choices=("float32", "float16", "bfloat16"), default="float32")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--inductor", action="store_true", help="also time backend='inductor'")
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    dtype = getattr(torch, args.dtype)
    print(f"inductor_tile {inductor_tile.__version__}, torch {torch.__version__}, device {args.device}")
    print(f"building {args.model} ({args.layers} layers, hidden {args.hidden}) from its config, random weights")
    model = build_model(args.model, args.layers, args.hidden, args.vocab, max(args.seq, 64))
    model = model.to(args.device, dtype)
    ids = torch.randint(0, args.vocab, (args.batch, args.seq), device=args.device)

    def run(m):
        with torch.no_grad():
            return m(input_ids=ids).logits

    reference = run(model)
    backends = ["tile"] + (["inductor"] if args.inductor else [])
    times = {"eager": time_per_call(lambda: run(model), args.device, args.repeats)}
    rows = []
    for backend in backends:
        torch._dynamo.reset()
        metrics.reset()
        compiled = torch.compile(model, backend=backend)
        print(f"compiling with backend={backend!r} (the first call compiles every kernel) ...", flush=True)
        start = time.perf_counter()
        out = run(compiled)
        if args.device == "cuda":
            torch.cuda.synchronize()
        compile_s = time.perf_counter() - start
        err = (out.double() - reference.double()).abs().max().item()
        cos = torch.nn.functional.cosine_similarity(out.double().flatten(), reference.double().flatten(), dim=0).item()
        times[backend] = time_per_call(lambda: run(compiled), args.device, args.repeats)
        kernels = (metrics.generated_kernels, metrics.fallback_kernels, metrics.graph_cache_hits) \
            if backend == "tile" else None
        rows.append((backend, compile_s, err, cos, kernels, list(metrics.fallback_reasons)))

    tol = 1e-3 if dtype == torch.float32 else 5e-2
    print(f"\n{'backend':<9} {'compile s':>9} {'ms/forward':>10} {'speedup':>8} {'max abs err':>11} {'cosine':>9}  result")
    print(f"{'eager':<9} {'':>9} {times['eager'] * 1e3:>10.2f} {1.0:>7.2f}x")
    failed = False
    for backend, compile_s, err, cos, _, _ in rows:
        ok = err <= tol * max(1.0, reference.abs().max().item()) and cos > 0.999
        failed |= not ok
        print(f"{backend:<9} {compile_s:>9.1f} {times[backend] * 1e3:>10.2f} {times['eager'] / times[backend]:>7.2f}x "
              f"{err:>11.2e} {cos:>9.6f}  {'ok' if ok else 'MISMATCH'}")
    generated, fallbacks, graph_hits = rows[0][4]
    print(f"\ntile kernels generated: {generated}; nodes run by Inductor's own kernels (fallbacks): {fallbacks}")
    if graph_hits:
        print(f"compiled graphs loaded from the graph cache: {graph_hits} (generated by an earlier process; "
              "TILE_GRAPH_CACHE=0 or `python -m inductor_tile.cache clear --graphs` compiles anew)")
    reasons = Counter(r.split(": ", 1)[-1] for r in rows[0][5])
    for reason, count in reasons.most_common(5):
        print(f"  {count} x {reason}")
    print("kernel sources: inductor_tile.metrics.kernel_sources; TILE_DUMP_IR=<dir> writes every IR stage")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
