"""`CompiledKernel.asm`: the text of each compiler stage, some of them made only when read.

A compile that only fills the disk cache (a compile worker's: ``compile_specialized(load=False)``)
does not print its TTIR and TTGIR modules: nothing in the torch.compile backend reads them, and
printing them was ~7% of each kernel's compile (0.77 of 11.2 CPU s over the 155 recorded kernels of
``model_benchmarks.nvidia_compile_stages``).  Its cache entry then holds the other stages only.  A
kernel whose `asm` lacks them still answers ``asm["ttir"]`` (and every other way of reading the
mapping: ``in``, ``get``, ``items``, ``dict(asm)``, ...): the first read compiles the same
specialization again without a binary and takes the missing texts from there.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator

#: the stages whose text a cache-filling compile leaves out
DEFERRABLE = ("ttir", "ttgir")


class StageTexts(dict):
    """A dict of stage -> text (bytes for AMD's code object) whose `deferred` stages are made by
    `remake()` (returning another mapping of stage texts) on the first read that needs them."""

    def __init__(self, texts: Any = (), remake: Callable[[], dict] | None = None,
                 deferred: tuple[str, ...] = ()):
        super().__init__(texts)
        self._deferred = tuple(stage for stage in deferred if not dict.__contains__(self, stage))
        self._remake = remake if self._deferred else None
        self._lock = threading.Lock()  # two threads reading a deferred stage: one compiles, the other waits

    def made(self) -> dict[str, Any]:
        """The texts made so far (what the disk cache stores), without making the deferred ones."""
        return dict(super().items())

    @property
    def deferred(self) -> tuple[str, ...]:
        """The stages not made yet."""
        return self._deferred if self._remake is not None else ()

    def _make_deferred(self) -> None:
        if self._remake is None:
            return
        with self._lock:
            if self._remake is None:  # made by another thread meanwhile
                return
            made = self._remake()
            for stage in self._deferred:
                if stage in made:
                    dict.setdefault(self, stage, made[stage])
            self._remake = None

    def __missing__(self, stage: str) -> Any:
        if stage in self.deferred:
            self._make_deferred()
            if dict.__contains__(self, stage):
                return dict.__getitem__(self, stage)
        raise KeyError(stage)

    # every way of reading the whole mapping (or asking for a key) sees the deferred stages too
    def __contains__(self, stage: object) -> bool:
        return dict.__contains__(self, stage) or stage in self.deferred

    def get(self, stage: str, default: Any = None) -> Any:
        try:
            return self[stage]
        except KeyError:
            return default

    def __iter__(self) -> Iterator[str]:
        self._make_deferred()
        return super().__iter__()

    def __len__(self) -> int:
        self._make_deferred()
        return super().__len__()

    def keys(self):
        self._make_deferred()
        return super().keys()

    def values(self):
        self._make_deferred()
        return super().values()

    def items(self):
        self._make_deferred()
        return super().items()

    def copy(self) -> dict[str, Any]:
        self._make_deferred()
        return dict(super().items())

    def __eq__(self, other: object) -> bool:
        self._make_deferred()
        return super().__eq__(other)

    def __ne__(self, other: object) -> bool:
        self._make_deferred()
        return super().__ne__(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self._make_deferred()
        return super().__repr__()

    def __reduce__(self):  # pickled (or deep-copied) as the plain dict of every stage
        return (dict, (self.copy(),))
