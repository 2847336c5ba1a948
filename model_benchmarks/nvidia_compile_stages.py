"""`python -m model_benchmarks.nvidia_compile_stages`: where the NVIDIA target's compile time goes, per kernel.

No GPU is needed: ptxas and libdevice are found as the compiler finds them (runtime/cuda_tools.py).

    python -m model_benchmarks.nvidia_compile_stages --record /tmp/nv.pkl --models BertForMaskedLM,T5Small
    python -m model_benchmarks.nvidia_compile_stages --replay /tmp/nv.pkl --runs 3 [--target cuda:90]

``--record`` runs the small models on the CPU with the kernels shaped as on a CUDA device (blocks,
warps, and every config a reduction is tuned among: cpu_compile_stages ``--heuristics cuda``).
``--replay`` compiles each recorded kernel for ``--target`` in ``--runs`` fresh processes, disk cache
off, as a compile worker does (a cubin, nothing loaded), and prints per kernel the median CPU seconds
of each stage: front end, TTIR passes, TTGIR passes, LLVM IR generation, parse (+ target machine),
libdevice link, O3 (+ printing the IR), PTX emission, ptxas (this thread's share), ``children`` (the CPU
time of the ptxas process) and the total; then the sum, mean and max over the kernels, and the
process's one-time costs, timed apart in order: importing the compiler, starting LLVM's targets,
parsing libdevice, and a first tiny kernel.  ``--save-ptx DIR`` writes each kernel's PTX to DIR (to check
that a compiler change leaves the PTX byte-identical: ``diff -r``).  ``--gc-freeze``: ``gc.freeze()`` after
the one-time costs (what a compile worker freezing its imported objects would gain in the collector's
line).  ``--profile N``: cProfile's top N functions of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from .cpu_compile_stages import child_results, compile_recorded, record, table, warm_up_compile

STAGES = ("frontend", "ttir", "ttgir", "to_llvm", "parse", "libdevice", "optimize", "ptx", "ptxas", "children")
ONCE = ("imports", "llvm_init", "libdevice_parse", "first_kernel")


def one_time_costs(target: str) -> dict[str, float]:
    """The per-process costs before the first kernel, in the order a compile worker meets them (CPU s)."""
    clock = time.thread_time
    costs = {}
    start = clock()
    from inductor_tile.codegen import runtime  # noqa: F401 - what a compile worker's warm-up imports
    from inductor_tile.kernel_compiler import compiler
    from inductor_tile.kernel_compiler.ir_builder import TTIRBuilder  # noqa: F401
    from inductor_tile.kernel_compiler.passes import pipeline  # noqa: F401
    from inductor_tile.kernel_compiler.to_llvm import lowering, nvptx  # noqa: F401

    costs["imports"] = clock() - start
    compiler.STAGE_CLOCK = clock  # CPU time of this thread: steadier than wall time on a shared machine
    start = clock()
    nvptx.nvptx_machine(int(target.split(":")[1]))
    costs["llvm_init"] = clock() - start
    from inductor_tile.kernel_compiler.runtime import libdevice

    start = clock()
    libdevice.subset_bitcode(["__nv_tanhf"])  # the whole library parsed once, one subset cut out
    costs["libdevice_parse"] = clock() - start
    start = clock()
    warm_up_compile(target)
    costs["first_kernel"] = clock() - start
    return costs


def replay_once(path: str, target: str, profile_top: int = 0, save_dir: str | None = None,
                gc_freeze: bool = False) -> dict:
    os.environ["TILE_CACHE_DISABLE"] = "1"
    once = one_time_costs(target)
    if gc_freeze:
        import gc

        gc.freeze()
    kernels = compile_recorded(path, target, profile_top, save_dir, text_stage="ptx")
    return {"warm_up": sum(once.values()), "once": once, "kernels": kernels}


def once_table(results: list[dict]) -> str:
    cells = [f"{statistics.median(r['once'][name] for r in results):.3f}" for name in ONCE]
    return (f"| once per process | {' | '.join(ONCE)} |\n|---" + "|---" * len(ONCE) + "|\n"
            f"| CPU s (median) | {' | '.join(cells)} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", metavar="PATH")
    parser.add_argument("--models", default="BertForMaskedLM,GPT2ForSequenceClassification,T5Small,Llama-3.2-1B")
    parser.add_argument("--heuristics", choices=("cpu", "cuda"), default="cuda",
                        help="--record: shape the kernels as for this device (default cuda)")
    parser.add_argument("--replay", metavar="PATH")
    parser.add_argument("--target", default="cuda:90")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--save-ptx", metavar="DIR", help="--replay: write each kernel's PTX to DIR (first run)")
    parser.add_argument("--gc-freeze", action="store_true", help="--replay: gc.freeze() before the kernels")
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.target.startswith("cuda:"):
        parser.error("--target: cuda:<capability>, e.g. cuda:90")
    if args.child:
        print(json.dumps(replay_once(args.child, args.target, args.profile, args.save_ptx, args.gc_freeze)))
        return 0
    if args.record:
        return record(args.record, args.models.split(","), args.heuristics)
    if args.replay:
        results = []
        for run in range(args.runs):
            extra = ["--save-ptx", args.save_ptx] if args.save_ptx and run == 0 else []
            extra += ["--gc-freeze"] if args.gc_freeze else []
            done = child_results("model_benchmarks.nvidia_compile_stages",
                                 ["--child", args.replay, "--target", args.target, *extra], 1,
                                 args.profile if run == 0 else 0)
            if done is None:
                return 1
            results += done
        print(table(results, STAGES, "one-time costs (below)"))
        print(once_table(results))
        return 0
    parser.error("--record PATH or --replay PATH")
    return 2


if __name__ == "__main__":
    sys.exit(main())
