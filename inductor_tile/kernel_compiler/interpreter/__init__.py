"""Interpreter mode (TILE_INTERPRET=1): kernels run on CPU with torch tensors as values."""

from .builder import InterpreterBuilder, torch_dtype
from .memory import Memory

__all__ = ["InterpreterBuilder", "Memory", "torch_dtype"]
