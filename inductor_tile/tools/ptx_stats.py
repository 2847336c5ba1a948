"""What a kernel costs on an NVIDIA GPU, read without one: registers, spills, instructions, shared-memory
accesses and barriers of its PTX (ptxas -v) and its machine instructions (cuobjdump -sass, where a
cuobjdump is found: next to ptxas, on PATH or in Triton's wheel), optionally next to Triton's PTX of the
same source.

    python -m inductor_tile.tools.ptx_stats KERNEL.py --signature in_ptr0=*fp16,in_ptr1=*fp32,xnumel=i32 \\
        --constexprs XBLOCK=8,RBLOCK=1024 [--kernel NAME] [--num-warps 4] [--arch 90] [--triton]

KERNEL.py holds `@inductor_tile.jit` kernels (a generated kernel written by `TILE_KERNEL_DIR`, or a
hand-written one); pointer and integer parameters are taken as divisible by 16, as the launcher
specializes them for aligned tensors and sizes. `--triton` compiles the same source with Triton (its
imports swapped) when Triton is installed: a kernel twice Triton's instructions or shared accesses
shows where our compiler, not the kernel's shape, is behind (session 15 found the rotary kernels'
libdevice calls and the reductions' layout conversions this way).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..kernel_compiler.runtime.cuda_tools import assemble_ptx, find_ptxas
from .triton_source import load_as_triton


def ptx_stats(ptx: str, arch: str) -> dict[str, int]:
    """Registers and spill bytes (ptxas -v for `arch`), counts of the PTX's instructions, and the machine
    instructions (SASS, NOPs left out) ptxas made of them (-1 where no cuobjdump is found)."""
    log: list[str] = []
    cubin = assemble_ptx(ptx, arch, "kernel", options=["-v"], log=log)
    report = "\n".join(log)
    opcodes = collections.Counter(op for op in map(_opcode, ptx.splitlines()) if op)
    spills = [int(n) for n in re.findall(r"(\d+) bytes spill (?:stores|loads)", report)]
    return {
        "registers": int(m.group(1)) if (m := re.search(r"Used (\d+) registers", report)) else -1,
        "spill bytes": sum(spills),
        "instructions": sum(opcodes.values()),
        "shared accesses": sum(n for op, n in opcodes.items() if op.startswith(("ld.shared", "st.shared"))),
        "vector shared accesses": sum(n for op, n in opcodes.items()
                                      if op.startswith(("ld.shared.v", "st.shared.v"))),
        "barriers": opcodes["bar.sync"] + opcodes["barrier.sync"],
        "SASS instructions": sass_instructions(cubin),
    }


def find_cuobjdump() -> str | None:
    """cuobjdump next to the ptxas in use, on PATH, or bundled with Triton; None if there is none."""
    ptxas_dir = Path(find_ptxas()).parent
    candidates = [ptxas_dir / "cuobjdump", Path(shutil.which("cuobjdump") or "/nonexistent")]
    triton = importlib.util.find_spec("triton")
    if triton is not None and triton.submodule_search_locations:
        candidates.append(Path(list(triton.submodule_search_locations)[0]) / "backends" / "nvidia" / "bin" / "cuobjdump")
    return next((str(path) for path in candidates if path.is_file()), None)


def sass_instructions(cubin: bytes) -> int:
    """Machine instructions of a cubin's kernels (`cuobjdump -sass`), NOPs (padding) left out; -1 without
    cuobjdump. PTX counts can mislead: ptxas folds moves and constant predicates, and splits wide ops."""
    tool = find_cuobjdump()
    if tool is None:
        return -1
    with tempfile.TemporaryDirectory(prefix="tile-sass-") as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        listing = subprocess.run([tool, "-sass", str(path)], capture_output=True, text=True, check=True).stdout
    return count_sass(listing)


def count_sass(listing: str) -> int:
    """Instructions of a `cuobjdump -sass` listing (`/*0010*/  @P0 LDG.E R2, desc[UR4][R2.64] ;`), NOPs
    left out."""
    lines = re.findall(r"^\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", listing, re.MULTILINE)
    return sum(1 for line in lines if _sass_opcode(line) != "NOP")


def _sass_opcode(line: str) -> str:
    words = line.split()
    if words and words[0].startswith("@"):  # a predicate guard
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def ptx_target(ptx: str, fallback: str) -> str:
    """The architecture a PTX module was written for (its `.target`, e.g. `sm_90a`: arch-specific
    instructions such as wgmma or setmaxnreg assemble only for it), or `fallback` when it names none."""
    match = re.search(r"^\s*\.target\s+(sm_\w+)", ptx, re.MULTILINE)
    return match.group(1) if match else fallback


def _opcode(line: str) -> str | None:
    """The instruction of a PTX line (`ld.global.v4.b32`; a predicate guard skipped), or None for
    directives, labels, braces and comments."""
    words = line.split()
    if not words or not line[:1].isspace():
        return None
    if words[0].startswith("@"):
        words = words[1:]
    return words[0].rstrip(";") if words and words[0][:1].isalpha() else None


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _kernel(module: Any, name: str | None) -> Any:
    kernels = {key: value for key, value in vars(module).items() if hasattr(value, "arg_names")}
    if not kernels:
        raise SystemExit(f"no jit kernel in {module.__file__}")
    if name is None:
        if len(kernels) > 1:
            raise SystemExit(f"several kernels ({', '.join(kernels)}): pick one with --kernel")
        return next(iter(kernels.values()))
    if name not in kernels:
        raise SystemExit(f"no kernel {name!r} (there are: {', '.join(kernels)})")
    return kernels[name]


def tile_ptx(path: Path, name: str | None, signature: dict[str, str], constexprs: dict[str, int],
             num_warps: int, capability: int) -> str:
    import inductor_tile

    kernel = _kernel(_load(path), name)
    aligned = [p for p, ty in signature.items() if ty.startswith("*") or ty.startswith("i")]
    return inductor_tile.compile(kernel, signature, constexprs=constexprs, target=f"cuda:{capability}",
                                 num_warps=num_warps, divisible_by_16=aligned).asm["ptx"]


def triton_ptx(path: Path, name: str | None, signature: dict[str, str], constexprs: dict[str, int],
               num_warps: int, capability: int) -> str:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    module = load_as_triton(path)
    if module is None:
        raise ImportError("triton")
    kernel = _kernel(module, name)
    params = list(kernel.arg_names)
    full = {p: signature.get(p, "constexpr") for p in params}
    attrs = {(i,): [["tt.divisibility", 16]] for i, p in enumerate(params)
             if p in signature and (signature[p].startswith("*") or signature[p].startswith("i"))}
    compiled = triton.compile(ASTSource(kernel, signature=full, constexprs=constexprs, attrs=attrs),
                              target=GPUTarget("cuda", capability, 32), options={"num_warps": num_warps})
    return compiled.asm["ptx"]


def _pairs(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.split(",") if item) if text else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--kernel", help="the kernel's name when the file has several")
    parser.add_argument("--signature", required=True, help="runtime parameters: name=*fp16,name=i32,...")
    parser.add_argument("--constexprs", default="", help="name=value,... for tl.constexpr parameters")
    parser.add_argument("--num-warps", type=int, default=4)
    parser.add_argument("--arch", type=int, default=90, help="compute capability (80, 90, ...)")
    parser.add_argument("--triton", action="store_true", help="also Triton's PTX of the same source")
    args = parser.parse_args(argv)
    signature = _pairs(args.signature)
    constexprs = {key: int(value) for key, value in _pairs(args.constexprs).items()}
    ptx = tile_ptx(args.file, args.kernel, signature, constexprs, args.num_warps, args.arch)
    columns = {"tile": ptx_stats(ptx, ptx_target(ptx, f"sm_{args.arch}"))}
    if args.triton:
        try:
            ptx = triton_ptx(args.file, args.kernel, signature, constexprs, args.num_warps, args.arch)
        except ImportError:
            print("Triton is not installed here: only tile's column", file=sys.stderr)
        except Exception as error:  # noqa: BLE001 - Triton's own refusal of the source, reported as such
            print(f"Triton did not compile it ({type(error).__name__}: {error}): only tile's column",
                  file=sys.stderr)
        else:
            columns["triton"] = ptx_stats(ptx, ptx_target(ptx, f"sm_{args.arch}"))
    print(f"{'':24s}" + "".join(f"{name:>10s}" for name in columns))
    for row in columns["tile"]:
        print(f"{row:24s}" + "".join(f"{stats[row]:>10d}" for stats in columns.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
