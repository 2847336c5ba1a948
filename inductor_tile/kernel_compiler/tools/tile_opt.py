"""tile-opt: parse TTIR, run passes, print the result (an `mlir-opt` for this project).

    python -m inductor_tile.kernel_compiler.tools.tile_opt -p canonicalize,cse file.mlir
    python -m inductor_tile.kernel_compiler.tools.tile_opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32},coalesce' file.mlir
    cat file.mlir | python -m inductor_tile.kernel_compiler.tools.tile_opt -p dce

`--split-input-file` processes each `// -----` chunk separately and prints the results
separated by `// -----`. Parse and verify errors go to stderr with exit status 1; with
`--verify-diagnostics` they are printed to stdout instead and the run succeeds, so that
FileCheck can match expected errors.
"""

from __future__ import annotations

import argparse
import sys

from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

from inductor_tile.kernel_compiler.ir.context import make_context, parse_ttir, print_ir
from xdsl.passes import ModulePass

from inductor_tile.kernel_compiler.passes import PASSES, parse_pass_pipeline

SPLIT_MARKER = "// -----"


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tile-opt", description="Run TTIR passes on MLIR text.")
    parser.add_argument("input", nargs="?", default="-", help="input file; '-' or nothing reads stdin")
    parser.add_argument(
        "-p", "--passes", default="", help=f"comma-separated passes, options in braces: {', '.join(sorted(PASSES))}"
    )
    parser.add_argument("--split-input-file", action="store_true", help="process each '// -----' chunk on its own")
    parser.add_argument("--verify-diagnostics", action="store_true", help="print errors to stdout and exit 0")
    return parser.parse_args(argv)


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def process(text: str, passes: list[ModulePass], name: str = "<stdin>") -> str:
    """Parse and verify `text`, run the passes (verifying after each), return the IR text."""
    ctx = make_context()
    module = parse_ttir(text, ctx, name)
    module.verify()
    for module_pass in passes:
        module_pass.apply(ctx, module)
        module.verify()
    return print_ir(module)


def main(argv: list[str] | None = None) -> None:
    args = _arguments(argv)
    try:
        passes = parse_pass_pipeline(args.passes) if args.passes.strip() else []
    except (KeyError, ValueError, TypeError) as error:
        sys.exit(f"tile-opt: bad pass pipeline {args.passes!r}: {error}")
    try:
        text = _read(args.input)
    except OSError as error:
        sys.exit(f"tile-opt: cannot read {args.input}: {error.strerror}")

    chunks = text.split(SPLIT_MARKER) if args.split_input_file else [text]
    outputs: list[str] = []
    failed = False
    for chunk in chunks:
        try:
            outputs.append(process(chunk, passes, "<stdin>" if args.input == "-" else args.input))
        except (ParseError, VerifyException, DiagnosticException) as error:
            if not args.verify_diagnostics:
                notes = "".join(f"\n{note}" for note in getattr(error, "__notes__", []))
                print(f"tile-opt: error: {error}{notes}", file=sys.stderr)
                failed = True
                continue
            outputs.append(f"error: {error}")
    if outputs:
        print(f"\n{SPLIT_MARKER}\n".join(outputs))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
