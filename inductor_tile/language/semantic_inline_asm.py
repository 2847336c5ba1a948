"""Typing rule of `tl.inline_asm_elementwise`, mixed into `Semantic`.

Triton's rule: the arguments (tensors or Python numbers, which get their own types: int32, fp32...) are
broadcast to one shape but not promoted; each result has that shape and a dtype the user names (one dtype,
or a tuple of them for several results). The assembly is LLVM inline-assembly text whose `$0`.. name the
results, then the arguments, each in the register its constraint asks for. Checked here so that mistakes
point at the kernel line: the strings, the dtypes, and that the constraints name one output per result
and one input register per argument (clobbers `~{...}` aside). With `pack` > 1 each execution handles `pack`
elements: elements narrower than 32 bits share registers (four int8 in one 32-bit register), wider ones
take a register each, so one argument or result may take several constraint entries. The `pack` elements
of one execution are consecutive in row-major order (the layout passes see to it), so a tensor's elements must
divide into groups of `pack`; a scalar's one execution is padded.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .core import constexpr, tensor
from .dtypes import block_type, dtype


def _unwrap(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


def elements_per_register(bits: int, pack: int) -> int:
    """How many of the `pack` elements of one execution share a register: as many `bits`-wide elements as
    fit 32 bits (Triton's rule), at most `pack`; 64-bit elements (and pointers) one each."""
    return max(1, min(32 // bits if bits else 1, pack))


def registers(bits: int, pack: int) -> int:
    """The registers (constraint entries) one argument or result of `bits`-wide elements takes per execution."""
    per = elements_per_register(bits, pack)
    return -(-pack // per)


def constraint_counts(constraints: str) -> tuple[int, int]:
    """(outputs, inputs) named by an LLVM constraint string: `=` entries are outputs, `~` entries clobbers."""
    entries = [c.strip() for c in constraints.split(",") if c.strip()]
    outputs = sum(c.startswith("=") for c in entries)
    inputs = sum(not c.startswith(("=", "~")) for c in entries)
    return outputs, inputs


def _bits(d: dtype) -> int:
    return 64 if d.is_ptr() else d.primitive_bitwidth


class InlineAsmSemantic:
    """Mixed into `Semantic` (uses its builder, to_tensor, broadcast_shapes, broadcast_to_shape)."""

    def inline_asm_elementwise(self, asm: Any, constraints: Any, args: Any, dtypes: Any, is_pure: Any,
                               pack: Any) -> tensor | tuple[tensor, ...]:
        from .semantic import TileTypeError, TileValueError

        name = "tl.inline_asm_elementwise"
        asm, constraints, is_pure, pack = (_unwrap(v) for v in (asm, constraints, is_pure, pack))
        if not isinstance(asm, str):
            raise TileTypeError(f"{name}: asm must be a string (constexpr), got {type(asm).__name__}")
        if not isinstance(constraints, str):
            raise TileTypeError(f"{name}: constraints must be a string (constexpr), got {type(constraints).__name__}")
        if not isinstance(is_pure, bool):
            raise TileTypeError(f"{name}: is_pure must be a bool (constexpr), got {is_pure!r}")
        if not isinstance(pack, int) or isinstance(pack, bool) or pack < 1:
            raise TileValueError(f"{name}: pack must be a positive int, got {pack!r}")
        dtypes = _unwrap(dtypes)
        several = isinstance(dtypes, (tuple, list))
        result_dtypes = [_unwrap(d) for d in (dtypes if several else (dtypes,))]
        if not result_dtypes:
            raise TileValueError(f"{name}: dtype names no result type")
        for d in result_dtypes:
            if not isinstance(d, dtype) or d.is_void() or d.is_block():
                raise TileTypeError(f"{name}: dtype must be a tl dtype (or a tuple of them), got {d!r}")
        args = _unwrap(args)
        if not isinstance(args, (tuple, list)):
            raise TileTypeError(f"{name}: args must be a list or tuple of tensors, got {type(args).__name__} "
                                "(wrap a single argument: [x])")
        try:
            values = [self.to_tensor(a) for a in args]
        except TileTypeError as e:
            raise TileTypeError(f"{name}: args: {e}") from None
        outputs, inputs = constraint_counts(constraints)
        want_outputs = sum(registers(_bits(d), pack) for d in result_dtypes)
        want_inputs = sum(registers(_bits(v.dtype), pack) for v in values)
        if (outputs, inputs) != (want_outputs, want_inputs):
            per = f" (pack={pack}: {pack} elements per execution, narrow ones sharing 32-bit registers)" if pack > 1 else ""
            raise TileValueError(
                f"{name}: constraints {constraints!r} name {outputs} output(s) and {inputs} input(s), but the call "
                f"has {len(result_dtypes)} result(s) and {len(values)} argument(s), which take {want_outputs} "
                f"output and {want_inputs} input register(s){per}")
        shapes = [v.type.shape for v in values if v.type.is_block()]
        shape: tuple[int, ...] | None = None
        for s in shapes:
            shape = s if shape is None else self.broadcast_shapes(shape, s)
        if shape is not None:
            values = [self.broadcast_to_shape(v, shape) for v in values]
        if shape is not None and pack > 1 and math.prod(shape) % pack:
            raise TileValueError(
                f"{name}: pack={pack} runs the assembly on {pack} consecutive elements (in row-major order) at a "
                f"time, but the {list(shape)} tensor's {math.prod(shape)} elements do not divide into groups of "
                f"{pack}")
        types = [block_type(d, shape) if shape is not None else d for d in result_dtypes]
        handles = self.builder.create_inline_asm(asm, constraints, [v.handle for v in values], types, is_pure, pack)
        results = tuple(tensor(h, t) for h, t in zip(handles, types))
        return results if several else results[0]
