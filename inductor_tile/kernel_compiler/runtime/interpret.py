"""Run a kernel in the interpreter: the grid program by program, on CPU torch tensors.

The kernel's Python function is executed (recompiled only so that assignments follow the
compiler's rule: interpreter/assignments.py), with the language's builtins bound to a semantic
over `InterpreterBuilder`, so `print` and `pdb.set_trace()` work inside it.
Tensors on another device are copied to the CPU for the launch and copied back.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import torch

from ...language.core import constexpr, semantic_scope, tensor
from ...language.dtypes import pointer_type
from ...language.semantic import Semantic, TileTypeError, TileValueError
from ...tools.tensor_descriptor import TensorDescriptor
from ..frontend.specialization import TORCH_TO_TILE
from ..interpreter import InterpreterBuilder, Memory
from ..interpreter.assignments import interpretable
from .jit import JITFunction


def interpret_launch(jit_fn: Any, bound: dict[str, Any], grid: tuple[int, int, int], num_warps: int = 4) -> None:
    memory = Memory()
    builder = InterpreterBuilder(memory)
    semantic = Semantic(builder, concrete=True, num_warps=num_warps)
    semantic.debug = os.environ.get("TILE_DEBUG") == "1" or jit_fn.debug
    copies: list[tuple[torch.Tensor, torch.Tensor]] = []
    with semantic_scope(semantic):
        args = {name: _to_language(jit_fn, name, value, semantic, memory, copies) for name, value in bound.items()}
        builder.grid = grid
        kernel = interpretable(jit_fn)
        for z, y, x in itertools.product(range(grid[2]), range(grid[1]), range(grid[0])):
            builder.program_id = (x, y, z)
            kernel(**args)
    for original, cpu_copy in copies:
        original.copy_(cpu_copy)


def _to_language(jit_fn: Any, name: str, value: Any, semantic: Semantic, memory: Memory,
                 copies: list[tuple[torch.Tensor, torch.Tensor]]) -> Any:
    if name in jit_fn.constexpr_names or value is None:
        return constexpr(value)
    if isinstance(value, constexpr):
        return value
    if isinstance(value, JITFunction):  # a @jit function passed as an argument: called in the kernel
        return constexpr(value)
    if isinstance(value, (tuple, list)):  # each element as the compiler sees it (grouped_arguments.py)
        items = [None if item is None else _to_language(jit_fn, f"{name}[{i}]", item, semantic, memory, copies)
                 for i, item in enumerate(value)]
        return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)
    if isinstance(value, TensorDescriptor):  # as the compiler sees it: a descriptor of the tensor at its base
        base = _to_language(jit_fn, name, value.base, semantic, memory, copies)
        try:
            return semantic.make_tensor_descriptor(base, value.shape, value.strides, list(value.block_shape),
                                                   value.padding)
        except (TileTypeError, TileValueError) as e:
            raise type(e)(f"argument '{name}' (a TensorDescriptor): {e}") from None
    if isinstance(value, torch.Tensor):
        element = TORCH_TO_TILE.get(value.dtype)
        if element is None:
            raise TypeError(f"argument '{name}': tensors of dtype {value.dtype} are not supported")
        if value.device.type != "cpu":
            cpu_copy = value.detach().to("cpu")
            copies.append((value, cpu_copy))
            value = cpu_copy
        address = memory.register(value)
        const = name in getattr(jit_fn, "const_names", ())
        return tensor(torch.tensor(address, dtype=torch.int64), pointer_type(element, const=const))
    if isinstance(value, (bool, int, float)):
        annotated = getattr(jit_fn, "scalar_annotations", {}).get(name)
        if annotated is not None:  # passed as the annotated type (`n: tl.int64`), as compiled
            from ..frontend.specialization import specialize

            specialize(name, value, False, annotated=annotated)  # the same range checks
            return semantic.literal(float(value) if annotated.is_floating() else int(value), annotated)
        return semantic.to_tensor(value)
    raise TypeError(
        f"argument '{name}' has unsupported type {type(value).__name__}: kernels take torch tensors, "
        "Python ints, floats and bools, None, or tl.constexpr values"
    )
