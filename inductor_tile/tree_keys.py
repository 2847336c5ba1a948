"""Hashes of whole source trees, remembered across processes while the trees stay the same.

A warm start needs several keys that hash every source file of a package: our own package
(``graph_cache.identity``, ``disk_cache.compiler_fingerprint``), torch's (Inductor's ``torch_key``,
part of every FX-graph and AOTAutograd cache key) and, on GPUs, Triton's (``triton_key``, which reads
``libtriton.so``).  Reading and hashing them costs a fresh process 0.5 s or more, the same answer
every time.  ``cached(name, tree, compute)`` returns the value computed by an earlier process when
the tree's *signature* is unchanged, else computes it and stores it for the next process.

The signature is the sha256 of (path, size, mtime_ns, ctime_ns, inode) of every file and directory
the tree covers: an edited, replaced, added or deleted file changes it (``ctime`` cannot be set back
by user programs, so even an edit that restores the old mtime and size is seen; a directory's
mtime changes when entries are added or removed).  It is taken *before* the value is computed,
so a file changed during the computation makes the next process compute again.

Entries live in ``<TILE_CACHE_DIR>/keys/<name>.json``, written atomically and carrying a sha256 of
their content; a damaged entry is computed again (and rewritten).  Without a cache directory every
value is computed, as before.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

FORMAT = 1


@dataclass(frozen=True)
class Tree:
    """Files whose content a value depends on.

    ``root``: the directory; ``packages_only``: below the root, walk only directories that are
    Python packages (what ``pkgutil.iter_modules`` recursion visits; other directories are still
    stat'ed, so one that becomes a package changes the signature); ``extra``: more files, relative
    to the root; ``salt``: anything else the value depends on (versions)."""

    root: Path
    packages_only: bool = False
    extra: tuple[str, ...] = ()
    salt: str = ""
    skip: frozenset[str] = field(default_factory=lambda: frozenset({"__pycache__"}))


def _stat_line(path: str, rel: str) -> str:
    try:
        st = os.stat(path, follow_symlinks=True)
    except OSError:
        return f"{rel}\0missing"
    return f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}"


def _is_package(names: list[str]) -> bool:
    return any(name.startswith("__init__.") and inspect.getmodulename(name) == "__init__" for name in names)


def signature(tree: Tree) -> str:
    """sha256 of the stat records of every file and directory ``tree`` covers."""
    lines = [f"format {FORMAT}", tree.salt, _stat_line(str(tree.root), ".")]

    def walk(directory: str, rel: str, top: bool) -> None:
        try:
            with os.scandir(directory) as it:
                entries = {e.name: e for e in it if e.name not in tree.skip}
        except OSError:
            lines.append(f"{rel}\0unreadable")
            return
        if tree.packages_only and not top and not _is_package(list(entries)):
            return  # not a package: its own stat record (in its parent's walk) is enough
        for name in sorted(entries):
            entry = entries[name]
            child = f"{rel}/{name}"
            lines.append(_stat_line(entry.path, child))
            if entry.is_dir():
                walk(entry.path, child, False)

    walk(str(tree.root), ".", True)
    lines += [_stat_line(str(tree.root / extra), f"extra:{extra}") for extra in tree.extra]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _entry_path(name: str) -> Path | None:
    from .kernel_compiler.runtime import disk_cache

    root = disk_cache.cache_dir()
    return None if root is None else root / "keys" / f"{name}.json"


def _checksum(sig: str, value: str) -> str:
    return hashlib.sha256(f"{sig}\n{value}".encode()).hexdigest()


def _read(path: Path, sig: str) -> str | None:
    try:
        data = json.loads(path.read_bytes())
        if data["signature"] == sig and data["sha256"] == _checksum(sig, data["value"]):
            return data["value"]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing, stale or damaged: computed again and rewritten
    return None


def _write(path: Path, sig: str, value: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w") as f:
            json.dump({"signature": sig, "value": value, "sha256": _checksum(sig, value)}, f)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache: the next process computes it again


stats = {"hits": 0, "computed": 0}


def cached(name: str, tree: Tree, compute: Callable[[], str]) -> str:
    """``compute()``, or what it returned in an earlier process for the same ``tree`` signature."""
    path = _entry_path(name)
    if path is None:
        return compute()
    sig = signature(tree)  # before computing: a file changed meanwhile makes the next process recompute
    value = _read(path, sig)
    if value is not None:
        stats["hits"] += 1
        return value
    value = compute()
    stats["computed"] += 1
    _write(path, sig, value)
    return value
