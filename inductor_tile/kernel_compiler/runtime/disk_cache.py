"""The on-disk cache of compiled kernels.

Layout, under the cache directory (`TILE_CACHE_DIR`, default `~/.cache/inductor_tile`):

    kernels/<key[:2]>/<key>/
        <name>.ttir  <name>.ttgir  <name>.llir  [<name>.asm | <name>.ptx]   every stage's text
        <name>.o | <name>.cubin                                             the binary
        metadata.json                                                       entry, target, specs, checksums
    tuning.db                                                               autotuning results (tuning_db.py)

`key` is the sha256 of everything that decides the generated code (`kernel_key`). An entry is
built in a temporary directory next to its final place and renamed in, so readers never see
a half-written entry; when two processes race, the first rename wins and the other keeps
the winner's entry. Loading verifies the sha256 of every file it reads (and of the metadata
itself); a damaged entry is reported with `warnings.warn`, deleted, and the kernel recompiled.  A
launch reads the binary only: the stage texts are read (and checked) when someone asks for them.

`TILE_CACHE_DISABLE=1` turns the cache off; an unusable directory turns it off with one warning.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

#: Environment variables whose values change the generated code; their values are part of every key.
CODE_ENV_FLAGS = ("TILE_LIBDEVICE_PATH", "TILE_PTXAS_PATH", "TILE_DEBUG", "TILE_WGMMA", "TILE_PIPELINE",
                  "TILE_TF32_MMA", "TILE_AMD_MFMA")  # TILE_DEBUG: device asserts
METADATA = "metadata.json"
FORMAT_VERSION = 1


@dataclass
class CacheStats:
    """Process-wide counters (for tests and the curious)."""

    hits: int = 0  # kernels loaded from disk
    misses: int = 0  # disk lookups that found nothing usable
    writes: int = 0  # entries written
    corrupt: int = 0  # entries found damaged (and deleted)
    compiles: int = 0  # kernels compiled by the pipeline (native, i.e. launchable)
    load_seconds: float = 0.0  # spent loading hits: key, reading and checking the entry, loading the binary
    compile_seconds: float = 0.0  # spent in the pipeline by this process's compiles (any thread)

    def reset(self) -> None:
        self.hits = self.misses = self.writes = self.corrupt = self.compiles = 0
        self.load_seconds = self.compile_seconds = 0.0

    def as_dict(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "writes": self.writes, "corrupt": self.corrupt,
                "compiles": self.compiles}


stats = CacheStats()
_lock = threading.Lock()
_checked_dirs: dict[str, Path | None] = {}
_fingerprint: str | None = None
_host_identity: list[str] = []


def _truthy(value: str | None) -> bool:
    return value not in (None, "", "0", "false", "False", "no")


def default_cache_dir() -> Path:
    return Path(os.environ.get("TILE_CACHE_DIR") or Path.home() / ".cache" / "inductor_tile")


def cache_dir() -> Path | None:
    """The usable cache directory, or None when the disk cache is off or unusable (warned once per directory)."""
    if _truthy(os.environ.get("TILE_CACHE_DISABLE")):
        return None
    path = default_cache_dir()
    text = str(path)
    with _lock:
        if text in _checked_dirs:
            return _checked_dirs[text]
        usable: Path | None = path
        try:
            path.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(prefix=".probe-", dir=path)
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            warnings.warn(f"inductor_tile: cache directory {text!r} is not usable ({e}); "
                          "the on-disk kernel and tuning caches are off", stacklevel=3)
            usable = None
        _checked_dirs[text] = usable
        return usable


def kernels_dir(root: Path) -> Path:
    return root / "kernels"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def compiler_fingerprint() -> str:
    """The compiler's identity: its version, llvmlite's, and the text of its own source files
    (so editing the compiler invalidates what it compiled before)."""
    global _fingerprint
    if _fingerprint is None:
        import llvmlite

        import inductor_tile

        from ...tree_keys import Tree, cached

        package = Path(inductor_tile.__file__).parent
        versions = (f"inductor_tile {inductor_tile.__version__}; llvmlite {llvmlite.__version__}; "
                    f"format {FORMAT_VERSION}")

        def compute() -> str:
            h = hashlib.sha256()
            h.update(versions.encode())
            for sub in ("kernel_compiler", "language"):
                for file in sorted((package / sub).rglob("*.py")):
                    h.update(str(file.relative_to(package)).encode())
                    h.update(file.read_bytes())
            return h.hexdigest()

        # the whole package's signature: a superset of the files read (remembered across processes)
        _fingerprint = cached("compiler_fingerprint", Tree(package, salt=versions), compute)
    return _fingerprint


def target_identity(target: str) -> str:
    """The target string with what the generated code depends on: the host CPU for 'cpu',
    the capability for 'cuda', the architecture (gfx942...) for 'hip'."""
    kind = target.split(":")[0]
    if kind == "cpu":
        if _host_identity:
            return _host_identity[0]
        import llvmlite.binding as llvm

        from ..to_llvm import llvm_tools

        llvm_tools.initialize()
        _host_identity.append(f"cpu:{llvm.get_process_triple()}:{llvm.get_host_cpu_name()}:"
                              f"{llvm.get_host_cpu_features().flatten()}")
        return _host_identity[0]
    if kind == "cuda":
        from ..to_llvm.targets import capability_of

        return f"cuda:{capability_of(target)}"
    if kind == "hip":
        from ..to_llvm.targets import arch_of

        return f"hip:{arch_of(target)}"
    return target


def kernel_key(jit_fn: Any, specs: list[Any], num_warps: int, target: str, sanitize: bool = False,
               num_stages: int = 3) -> str:
    """sha256 of everything that decides a compiled kernel's code (`sanitize`: the sanitizer's checks)."""
    parts = {
        "source": jit_fn.cache_key,  # the kernel and every @jit function it calls, transitively
        "specs": [list(map(str, s.key())) for s in specs],
        "num_warps": num_warps,
        "target": target_identity(target),
        "compiler": compiler_fingerprint(),
        "env": {name: os.environ.get(name, "") for name in CODE_ENV_FLAGS},
    }
    if sanitize:
        parts["sanitize"] = True
    if getattr(jit_fn, "debug", False):  # @jit(debug=True): device assertions compiled in
        parts["debug"] = True
    if num_stages != 3:  # the default keeps the keys of earlier entries
        parts["num_stages"] = num_stages
    return _sha256(json.dumps(parts, sort_keys=True).encode())


def entry_dir(root: Path, key: str) -> Path:
    return kernels_dir(root) / key[:2] / key


# ===--------------------------------------------------------------------------===
# Loading and storing
# ===--------------------------------------------------------------------------===
@dataclass
class Entry:
    """A verified cache entry: metadata, stage texts and the binary.  `later`: the stages whose text was
    not read by `load` (stage -> (file, sha256)), read and checked by `read_later` when asked for."""

    key: str
    metadata: dict[str, Any]
    asm: dict[str, str]
    binary: bytes
    path: Path | None = None
    later: dict[str, tuple[str, str]] = field(default_factory=dict)


def read_later(path: Path, later: dict[str, tuple[str, str]]) -> dict[str, str]:
    """The texts of an entry's stages that `load` left for later (`Entry.later`), checked.  A file damaged
    or gone since is left out (the caller makes that text again) and the entry treated as `load` treats a
    damaged one: a warning, and deleted (the process's kernel keeps the binary it checked and loaded)."""
    texts, damaged = {}, []
    for stage, (name, digest) in later.items():
        try:
            data = (path / name).read_bytes()
            if _sha256(data) != digest and not _rewritten_with(path, name, data):
                damaged.append(f"file {name} does not match its checksum (size {len(data)} bytes)")
                continue
            texts[stage] = data.decode()
        except (OSError, UnicodeDecodeError) as e:
            damaged.append(f"file {name} is unreadable ({type(e).__name__})")
    if damaged and path.exists():  # gone altogether: deleted by another reader, nothing to say
        warnings.warn(f"inductor_tile: damaged kernel cache entry {path}: {'; '.join(damaged)}; deleting it "
                      "(its stage texts are made again)", stacklevel=4)
        stats.corrupt += 1
        remove_entry(path)
    return texts


def _rewritten_with(path: Path, name: str, data: bytes) -> bool:
    """Whether the entry at `path` is another one now (the same key, written again by another process after
    it deleted the one we loaded) whose metadata vouches for `data` as its file `name`."""
    body = read_metadata(path)
    return body is not None and (body.get("files") or {}).get(name) == _sha256(data)


class _Damaged(Exception):
    pass


def _seal(body: dict[str, Any]) -> bytes:
    """metadata.json: the body plus the sha256 of its canonical JSON (so the metadata checks itself)."""
    canonical = json.dumps(body, sort_keys=True)
    return json.dumps({"body": body, "sha256": _sha256(canonical.encode())}, sort_keys=True, indent=1).encode()


def _unseal(data: bytes) -> dict[str, Any]:
    try:
        sealed = json.loads(data.decode())
        body = sealed["body"]
        expected = sealed["sha256"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise _Damaged(f"{METADATA} is unreadable ({type(e).__name__}: {e})") from None
    if not isinstance(body, dict) or _sha256(json.dumps(body, sort_keys=True).encode()) != expected:
        raise _Damaged(f"{METADATA} does not match its checksum")
    return body


def read_metadata(path: Path) -> dict[str, Any] | None:
    """An entry's metadata (for listing), or None if unreadable."""
    try:
        return _unseal((path / METADATA).read_bytes())
    except (OSError, _Damaged):
        return None


def load(key: str, texts: bool | tuple[str, ...] = True) -> Entry | None:
    """The verified entry for `key`, or None (missing, or damaged: then warned about and deleted).
    `texts`: the stage texts read (and checked) now, all of them (True) or those named; the others are
    in `Entry.later`.  A launch needs the binary only (and a sanitized kernel its "sanitizer" stage):
    a warm start that loads a model's kernels reads no IR or assembly text."""
    root = cache_dir()
    if root is None:
        return None
    path = entry_dir(root, key)
    if not path.is_dir():
        stats.misses += 1
        return None
    try:
        try:
            body = _unseal((path / METADATA).read_bytes())
        except FileNotFoundError:
            raise _Damaged(f"{METADATA} is missing") from None
        if body.get("key") != key:
            raise _Damaged(f"{METADATA} belongs to another entry")
        contents: dict[str, bytes] = {}
        stage_of = {name: stage for stage, name in body["stages"].items()}
        later = {}
        for name, digest in body["files"].items():
            stage = stage_of.get(name)
            if stage is not None and texts is not True and stage not in texts and name != body["binary"]:
                later[stage] = (name, digest)
                continue
            try:
                data = (path / name).read_bytes()
            except FileNotFoundError:
                raise _Damaged(f"file {name} is missing") from None
            if _sha256(data) != digest:
                raise _Damaged(f"file {name} does not match its checksum (size {len(data)} bytes)")
            contents[name] = data
        asm = {stage: contents[name].decode() for stage, name in body["stages"].items() if stage not in later}
        binary = contents[body["binary"]]
    except (_Damaged, KeyError, TypeError, AttributeError, UnicodeDecodeError, OSError) as e:
        problem = str(e) if isinstance(e, _Damaged) else f"{type(e).__name__}: {e}"
        warnings.warn(f"inductor_tile: damaged kernel cache entry {path}: {problem}; deleting it and recompiling",
                      stacklevel=3)
        stats.corrupt += 1
        stats.misses += 1
        remove_entry(path)
        return None
    stats.hits += 1
    return Entry(key, body, asm, binary, path, later)


def remove_entry(path: Path) -> None:
    """Delete an entry without disturbing a concurrent reader or writer: rename it away, then remove."""
    try:
        doomed = path.with_name(f".{path.name}.del-{os.getpid()}-{threading.get_ident()}")
        os.rename(path, doomed)
    except OSError:
        doomed = path
    shutil.rmtree(doomed, ignore_errors=True)


def store(key: str, name: str, asm: dict[str, str], binary: bytes, binary_suffix: str,
          metadata: dict[str, Any]) -> Path | None:
    """Write an entry atomically; if another process wrote it first, keep theirs. Never raises."""
    root = cache_dir()
    if root is None:
        return None
    final = entry_dir(root, key)
    if final.exists():
        return final
    files: dict[str, bytes] = {f"{name}.{stage}": text.encode() for stage, text in asm.items()}
    binary_name = f"{name}.{binary_suffix}"
    files[binary_name] = binary
    body = dict(metadata)
    body.update({"key": key, "name": name, "stages": {stage: f"{name}.{stage}" for stage in asm},
                 "binary": binary_name, "files": {n: _sha256(d) for n, d in files.items()},
                 "created": time.time(), "format": FORMAT_VERSION})
    tmp: str | None = None
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=f".{key}.tmp-", dir=final.parent)
        for file_name, data in files.items():
            with open(os.path.join(tmp, file_name), "wb") as f:
                f.write(data)
        with open(os.path.join(tmp, METADATA), "wb") as f:
            f.write(_seal(body))
        try:
            os.rename(tmp, final)  # atomic; fails if another process's entry is already there
            tmp = None
        except OSError:
            if not final.exists():
                raise
        else:
            stats.writes += 1
        return final
    except OSError as e:
        warnings.warn(f"inductor_tile: could not write kernel cache entry {final}: {e}", stacklevel=3)
        return None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def entries(root: Path) -> Iterator[Path]:
    """Every entry directory under `root` (complete or not; temporaries excluded)."""
    base = kernels_dir(root)
    if not base.is_dir():
        return
    for shard in sorted(base.iterdir()):
        if not shard.is_dir():
            continue
        for entry in sorted(shard.iterdir()):
            if entry.is_dir() and not entry.name.startswith("."):
                yield entry


def clear_memory_state() -> None:
    """Forget which directories were checked (tests switch TILE_CACHE_DIR)."""
    with _lock:
        _checked_dirs.clear()
