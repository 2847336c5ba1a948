"""The launch fast path: a per-kernel function that turns launch arguments into a cache key.

`make_binder(jit_fn)` generates (once, with `exec`) a function with the kernel's own
parameter list, so Python itself matches positional and keyword arguments and applies
defaults; it returns the specialization key and the argument values in parameter order.
The key holds what the compiler specializes on: tensor dtype, whether it is on a CUDA
device, and 16-byte alignment; integer width, divisibility by 16 and equality to 1; constexpr values. Two
launches with equal keys can share one compiled kernel, so the slow path (full
specialization and compilation) runs once per key.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import torch

from ...language.core import constexpr
from ...tools.tensor_descriptor import TensorDescriptor
from .generated_code import run_generated

_Tensor = torch.Tensor
_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1


def spec_key(value: Any) -> Any:
    """The specialization-relevant facts of one runtime argument."""
    cls = value.__class__
    if cls is _Tensor or isinstance(value, _Tensor):
        # is_cuda, not device.type: building a torch.device costs more than the rest of the key
        return (value.dtype, value.is_cuda, value.data_ptr() & 15 == 0)
    if cls is int:
        return ("int", _I32_MIN <= value <= _I32_MAX, value & 15 == 0, value == 1)
    if cls is float:
        return "fp32"
    if cls is bool:
        return "i1"
    if value is None:
        return None
    if cls is TensorDescriptor:
        return value.spec_key()
    if isinstance(value, (tuple, list)):  # each element as a parameter of its own (grouped_arguments.py)
        return (cls, tuple(spec_key(item) for item in value))
    if cls is constexpr:
        return ("constexpr", value.value)
    # anything else by identity (a @jit function passed as an argument); the slow path explains what a kernel
    # cannot take (an unhashable value also goes there)
    return ("object", value)


def plain_key(value: Any) -> Any:
    """Like spec_key for `do_not_specialize` parameters: only the type matters."""
    if value.__class__ is int:
        return ("int", _I32_MIN <= value <= _I32_MAX)
    return spec_key(value)


def make_binder(jit_fn: Any) -> Callable[..., tuple[tuple, tuple]]:
    """A function (*args, **kwargs) -> (key, values in parameter order) for `jit_fn`'s signature."""
    params = list(jit_fn.signature.parameters.values())
    defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    header = []
    for p in params:  # no *args / **kwargs: JITFunction refuses them
        header.append(f"{p.name}=_defaults[{p.name!r}]" if p.name in defaults else p.name)
    key_parts = []
    for p in params:
        if p.name in jit_fn.constexpr_names:
            key_parts.append(p.name)
        elif p.name in jit_fn.do_not_specialize:
            key_parts.append(f"_plain({p.name})")
        else:
            key_parts.append(f"_spec({p.name})")
    names = ", ".join(p.name for p in params)
    source = (
        f"def bind({', '.join(header)}):\n"
        f"    return ({''.join(k + ', ' for k in key_parts)}), ({''.join(n + ', ' for n in names.split(', ') if n)})\n"
    )
    namespace: dict[str, Any] = {"_defaults": defaults, "_spec": spec_key, "_plain": plain_key}
    run_generated(source, f"<binder of {jit_fn.__name__}>", namespace)
    return namespace["bind"]
