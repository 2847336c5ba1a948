"""The targets behind the lowering's interface: cpu, cuda (NVIDIA) and hip (AMD)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the target classes import llvmlite.ir: a GPU warm start only asks for the target's name
    from ..target import Target


def get_target(name: str) -> Target:
    """The target for a target string: 'cpu', 'cuda:90', 'hip:gfx942'."""
    kind = name.split(":")[0]
    if kind == "cpu":
        from .cpu import CPUTarget

        return CPUTarget()
    if kind == "cuda":
        from .nvidia import NvidiaTarget

        return NvidiaTarget(capability_of(name))
    if kind == "hip":
        from .amd import AMDTarget

        return AMDTarget(arch_of(name))
    raise NotImplementedError(f"unknown target {kind!r} (supported: cpu, cuda, hip)")


def capability_of(name: str) -> int:
    """'cuda:90' -> 90; plain 'cuda' -> the current GPU's capability (90 if there is none)."""
    if ":" in name:
        return int(name.split(":")[1].removeprefix("sm_"))
    try:
        import torch

        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return major * 10 + minor
    except ImportError:  # pragma: no cover
        pass
    return 90


def arch_of(name: str) -> str:
    """'hip:gfx942' -> 'gfx942'; plain 'hip' -> the current GPU's architecture (gfx942 if there is none)."""
    if ":" in name:
        return name.split(":", 1)[1]
    try:
        import torch

        if torch.version.hip and torch.cuda.is_available():
            return _device_arch(torch.cuda.current_device())
    except (ImportError, AttributeError):  # pragma: no cover
        pass
    return "gfx942"


@functools.lru_cache(maxsize=None)
def _device_arch(device: int) -> str:
    import torch

    return torch.cuda.get_device_properties(device).gcnArchName.split(":")[0]  # "gfx942:sramecc+:xnack-"


def gpu_target() -> str:
    """The target string for torch's "cuda" device: 'hip:<arch>' on a ROCm build of torch, else 'cuda'."""
    import torch

    return f"hip:{arch_of('hip')}" if getattr(torch.version, "hip", None) else "cuda"
