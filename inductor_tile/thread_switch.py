"""`ThreadSwitch`: a value per thread, set for the extent of a `with` block.

The backend patches some of Inductor's process-wide entry points (lowerings, `Scan.create`,
`GraphLowering.run`) once, and the patches act only while a tile compile runs in the same thread,
so that a `backend="inductor"` compile in another thread, or after ours, is untouched.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any


class ThreadSwitch:
    def __init__(self, default: Any = False):
        self._local = threading.local()
        self._default = default

    def get(self) -> Any:
        return getattr(self._local, "value", self._default)

    @contextlib.contextmanager
    def set(self, value: Any = True) -> Iterator[None]:
        """`value` in this thread inside the block; the outer value again after it (nested blocks too)."""
        previous = self.get()
        self._local.value = value
        try:
            yield
        finally:
            self._local.value = previous
