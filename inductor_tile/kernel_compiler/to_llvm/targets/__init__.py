"""The targets behind the lowering's interface: cpu (here), cuda and hip (to come)."""

from __future__ import annotations

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
    raise NotImplementedError(f"the {kind} target is not available yet (supported: cpu)")


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
