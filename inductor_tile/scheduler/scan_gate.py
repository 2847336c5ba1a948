"""Which scans and sorts Inductor builds as loop nodes for us (the rest stay aten calls).

``TileScheduling`` declares Inductor's SCAN, SORT and TUPLE_REDUCTION features, so the lowering
of cumsum/cumprod/logcumsumexp/cummax/cummin/associative_scan builds ``Scan`` nodes and that of
sort/argsort ``Sort`` nodes, which ``codegen/scans.py`` generates.  A node we could not generate
would go to Inductor's own scheduling, and on the CPU that is its C++ codegen, which has no scans
or sorts: so while our compile lowers a graph, ``Scan.create`` / ``Sort.create`` answer "no node"
(aten runs the op, as before) for what the codegen does not take: dtypes without a tile type,
sorts by 64-bit keys or over rows longer than ``scans.MAX_SORT_ELEMENTS``.
"""

from __future__ import annotations

import contextlib
import threading

from ..thread_switch import ThreadSwitch

_lock = threading.RLock()
_active = ThreadSwitch()


def _device_wanted(args, kwargs) -> bool:
    """``config.scans``: ``on`` (default) generates scans and sorts everywhere, ``cpu`` for the CPU
    target only, ``off`` nowhere."""
    from .. import config

    choice = getattr(config, "scans", "on")
    if choice in ("on", "off"):
        return choice == "on"
    device = kwargs.get("device", args[0] if args else None)
    return getattr(device, "type", device) == "cpu"


def _gated(original, accepts):
    def create(cls, *args, **kwargs):
        if _active.get() and not (_device_wanted(args, kwargs) and accepts(kwargs)):
            return [None] * len(kwargs.get("dtypes", ()) or (None,))
        return original.__func__(cls, *args, **kwargs)

    create.__wrapped__ = original
    return classmethod(create)


def _accepts_scan(kwargs) -> bool:
    from ..codegen import scans

    return scans.supported_scan(kwargs.get("dtypes", ()))


def _accepts_sort(kwargs) -> bool:
    from ..codegen import scans

    size, axis = kwargs.get("size"), kwargs.get("axis")
    if size is None or axis is None:
        return False
    return scans.supported_sort(kwargs.get("dtypes", ()), size[axis])


def _install() -> None:
    """Wrap Scan.create and Sort.create once; the wrappers only act in a thread inside `scans_gated`."""
    from torch._inductor import ir

    with _lock:
        for cls, accepts in ((ir.Scan, _accepts_scan), (ir.Sort, _accepts_sort)):
            current = cls.__dict__["create"]
            if not hasattr(current.__func__, "__wrapped__"):
                cls.create = _gated(current, accepts)


@contextlib.contextmanager
def scans_gated():
    """While this thread lowers a graph for us: Scan/Sort nodes only where our codegen takes them."""
    _install()
    with _active.set():
        yield
