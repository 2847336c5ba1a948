"""`TensorDescriptor`: a tensor descriptor made on the host and passed to a kernel as one argument
(Triton's `triton.tools.tensor_descriptor.TensorDescriptor`, same fields and `from_tensor`).

    desc = TensorDescriptor.from_tensor(x, block_shape=[64, 64])
    kernel[grid](desc, ...)          # in the kernel: desc.load([i, j]), desc.store([i, j], v)

A kernel is specialized on the descriptor's element type and block shape (and padding); its base
pointer, shape and strides are run-time arguments (specialized like other integers: divisible by 16,
equal to 1). The block shape may be changed after construction (autotuning pre-hooks set it per
config) and is checked when the kernel is compiled. Triton's alignment rules for the tensor memory
accelerator (16-byte base and strides) are not required here: accesses are ordinary loads and stores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_RANK = 5


@dataclass
class TensorDescriptor:
    base: Any  # a torch tensor: where the described tensor starts, and its element type
    shape: list[int]
    strides: list[int]  # in elements; the last must be 1
    block_shape: list[int]
    padding: str = "zero"  # what loads give outside the tensor: "zero" or "nan"

    def __post_init__(self) -> None:
        self.shape, self.strides = [int(s) for s in self.shape], [int(s) for s in self.strides]
        rank = len(self.shape)
        if not 1 <= rank <= MAX_RANK:
            raise ValueError(f"TensorDescriptor: 1 to {MAX_RANK} dimensions, got shape {self.shape}")
        if len(self.strides) != rank or len(self.block_shape) != rank:
            raise ValueError(f"TensorDescriptor: shape {self.shape}, strides {self.strides} and block_shape "
                             f"{list(self.block_shape)} must have the same length")
        if not (hasattr(self.base, "data_ptr") and hasattr(self.base, "dtype")):
            raise TypeError(f"TensorDescriptor: base must be a tensor, got {type(self.base).__name__}")
        if self.strides[-1] != 1:
            raise ValueError(f"TensorDescriptor: the last dimension must be contiguous (stride 1), got strides "
                             f"{self.strides}")
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"TensorDescriptor: padding must be 'zero' or 'nan', got {self.padding!r}")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: list[int], padding: str = "zero") -> "TensorDescriptor":
        """The descriptor of the whole of `tensor` (its shape and strides)."""
        return TensorDescriptor(tensor, list(tensor.shape), list(tensor.stride()), block_shape, padding)

    # --- what kernels see (runtime/jit.py, frontend/specialization.py, runtime/interpret.py) --------------
    def launch_values(self) -> list[Any]:
        """The run-time arguments the descriptor stands for: base, shape..., strides... ."""
        return [self.base, *self.shape, *self.strides]

    def spec_key(self) -> tuple:
        """What a kernel compiled for this descriptor depends on (the launch fast path's key)."""
        from ..kernel_compiler.runtime.binder import spec_key

        return ("descriptor", tuple(int(b) for b in self.block_shape), self.padding,
                *(spec_key(v) for v in self.launch_values()))


def is_tensor_descriptor(value: Any) -> bool:
    return isinstance(value, TensorDescriptor)
