"""The graph cache of ``backend="tile"``: each compiled graph (forward and backward) is stored
on disk and reused by later processes, skipping AOTAutograd, lowering, scheduling and codegen.

Inductor already has this machinery (the FX-graph cache of compiled graph modules, the
AOTAutograd cache of forward/backward pairs: keys from the graph, input metadata, guards
on symbolic sizes, Inductor's config, torch and Triton versions and the device).  What it
does not know is our codegen, so while a tile graph compiles (``tile_caches``):

- the key gets our identity through ``torch.compiler.config.cache_key_tag`` (Inductor's own
  way to tag keys, part of both caches' keys): the package version, the text of every
  source file of the package, ``inductor_tile.config`` and the target (see ``identity``);
- Inductor's cache directory (``TORCHINDUCTOR_CACHE_DIR``) points at ``graphs/`` beside our
  kernel cache, so nothing of ours lands in Inductor's directory and nothing of Inductor's
  is read: the wrapper modules, FX-graph and AOTAutograd entries of tile graphs live there.
  Inductor's compile workers take that variable with each task, so a pool started by one
  backend serves the other correctly;
- the keys' costliest parts, hashes of whole source trees (our package's, and Inductor's
  ``torch_key``/``triton_key`` of torch's and Triton's), come from ``tree_keys``: computed once, then
  reused by later processes while every file of the tree is unchanged (``prime_inductor_keys``);
- entries are written atomically (Inductor's ``write_atomic``) and, while ours are read and
  written, each file carries a sha256 of its content: a damaged entry is reported with
  ``warnings.warn``, deleted and rebuilt.  Entries written by Inductor itself never pass
  through this check (it applies only inside ``tile_caches``).

The wrapper module of a cached graph names its kernels by source text; their binaries come
from the kernel cache (``kernel_compiler/runtime/disk_cache.py``) at the first launch.

Off (Inductor's caches simply disabled for our compiles, as before) with
``inductor_tile.config.graph_cache = False`` (``TILE_GRAPH_CACHE=0``), when the kernel cache is
off (``TILE_CACHE_DISABLE=1``), or with torch's ``force_disable_caches``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import threading
import warnings
from pathlib import Path

_identity: dict[str, str] = {}
_state = threading.local()
_patch_lock = threading.Lock()
_CHECKSUM_MAGIC = b"inductor_tile graph cache entry sha256:"
_ENV = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")


def graphs_dir(root: Path) -> Path:
    return root / "graphs"


def _package_source_hash() -> str:
    """sha256 of every source file of the package (remembered across processes: ``tree_keys``)."""
    import inductor_tile

    from . import tree_keys

    package = Path(inductor_tile.__file__).parent

    def compute() -> str:
        h = hashlib.sha256()
        for file in sorted(package.rglob("*.py")):
            h.update(str(file.relative_to(package)).encode())
            h.update(file.read_bytes())
        return h.hexdigest()

    return tree_keys.cached("inductor_tile_source", tree_keys.Tree(package, salt=inductor_tile.__version__), compute)


#: settings that change how a graph compiles, never the code it compiles to
_NOT_CODE = frozenset({"graph_cache", "progress", "precompile", "compile_workers"})


def _config_values() -> dict[str, str]:
    from . import config

    return {name: repr(value) for name, value in sorted(vars(config).items())
            if not name.startswith("_") and name not in _NOT_CODE
            and isinstance(value, (bool, int, float, str, tuple))}


def _target_identity() -> str:
    """What the generated code may depend on beyond what Inductor's key has: GPU capability and size."""
    import torch

    parts = []
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        parts.append(f"cuda:{props.major}.{props.minor}:{props.name}:{props.multi_processor_count}")
    return ";".join(parts)


def identity() -> str:
    """sha256 of everything of ours that decides a compiled graph's code (the cache key tag)."""
    import llvmlite

    import inductor_tile

    from .kernel_compiler.runtime import disk_cache

    if "source" not in _identity:
        _identity["source"] = _package_source_hash()
    parts = {
        "version": inductor_tile.__version__,
        "llvmlite": llvmlite.__version__,
        "source": _identity["source"],
        "config": _config_values(),
        "target": _target_identity(),
        "env": {name: os.environ.get(name, "") for name in disk_cache.CODE_ENV_FLAGS},
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def enabled() -> bool:
    import torch

    from . import config
    from .kernel_compiler.runtime import disk_cache

    if not config.graph_cache or torch.compiler.config.force_disable_caches:
        return False
    return disk_cache.cache_dir() is not None


@contextlib.contextmanager
def caches_off():
    """Inductor's and AOTAutograd's caches off (their keys do not know our codegen)."""
    with _patch_configs(False):
        yield


@contextlib.contextmanager
def _patch_configs(on: bool, tag: str | None = None, autograd_cache: bool | None = None):
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    def patch(module, values):
        return module.patch({k: v for k, v in values.items() if hasattr(module, k)})

    with contextlib.ExitStack() as stack:
        stack.enter_context(patch(inductor_config, {"fx_graph_cache": on, "fx_graph_remote_cache": False}))
        autograd_cache = on if autograd_cache is None else autograd_cache and on
        stack.enter_context(patch(functorch_config, {"enable_autograd_cache": autograd_cache,
                                                     "enable_remote_autograd_cache": False}))
        if tag is not None:
            stack.enter_context(torch_compiler_config().patch(cache_key_tag=tag))
        yield


def torch_compiler_config():
    import torch.compiler.config

    return torch.compiler.config


@contextlib.contextmanager
def tile_caches():
    """While compiling a tile graph: Inductor's graph caches in our directory, keyed with our identity."""
    if not enabled():
        with caches_off():
            yield
        return

    autograd_cache = _install_checksums()
    if autograd_cache is None:
        with caches_off():
            yield
        return
    prime_inductor_keys()
    user_tag = torch_compiler_config().cache_key_tag
    tag = f"{user_tag}|inductor_tile:{identity()}" if user_tag else f"inductor_tile:{identity()}"
    outermost = not _active()
    before = _fx_counts()
    try:
        with _our_directory(), _patch_configs(True, tag, autograd_cache):
            yield
    finally:
        if outermost:
            from . import metrics

            after = _fx_counts()
            metrics.graph_cache_hits += after[0] - before[0]
            metrics.graph_cache_misses += after[1] - before[1]


_primed: list[bool] = []
#: files torch_key reads besides the package's modules (relative to the torch directory)
_TORCH_KEY_EXTRA = ("_inductor/codegen/aoti_runtime/interface.cpp", "_inductor/script.ld")


def prime_inductor_keys() -> None:
    """Give Inductor its ``torch_key`` (and ``triton_key`` where Triton is installed) from
    ``tree_keys`` before it computes them: both hash a whole package's files, ~0.5 s per fresh
    process here, and enter every FX-graph and AOTAutograd cache key.  The value is exactly what
    Inductor computed in an earlier process over the same files (the tree's stat signature is
    unchanged), so its keys -- for our graphs and its own -- are the same.  Once per process;
    nothing on a torch whose keys cannot be set."""
    with _patch_lock:
        if _primed:
            return
        _primed.append(True)
    import importlib.util

    import torch
    from torch._inductor import codecache

    from . import tree_keys

    torch_key = getattr(codecache, "torch_key", None)
    if callable(getattr(torch_key, "set", None)):
        root = Path(getattr(codecache, "_TORCH_PATH", None) or Path(torch.__file__).parent)
        tree = tree_keys.Tree(root, packages_only=True, extra=_TORCH_KEY_EXTRA, salt=f"torch {torch.__version__}")
        _set_key(torch_key, tree_keys.cached("torch_key", tree, lambda: _encode(torch_key())))
    triton_key = getattr(codecache, "triton_key", None)
    try:
        spec = importlib.util.find_spec("triton")  # finds, does not import
    except (ImportError, ValueError):
        spec = None
    if callable(getattr(triton_key, "set", None)) and spec is not None and spec.submodule_search_locations:
        tree = tree_keys.Tree(Path(list(spec.submodule_search_locations)[0]))  # every file: libtriton.so too
        _set_key(triton_key, tree_keys.cached("triton_key", tree, lambda: _encode(triton_key())))


def _encode(value) -> str:
    return json.dumps({"bytes": base64.b64encode(value).decode()} if isinstance(value, bytes) else {"value": value})


def _set_key(cache, encoded: str) -> None:
    data = json.loads(encoded)
    value = base64.b64decode(data["bytes"]) if "bytes" in data else data["value"]
    try:
        cache.set(value)
    except (RuntimeError, AssertionError):
        pass  # already computed in this process (by the call that filled the entry, or earlier)


def _fx_counts() -> tuple[int, int]:
    from torch._dynamo.utils import counters

    return counters["inductor"]["fxgraph_cache_hit"], counters["inductor"]["fxgraph_cache_miss"]


@contextlib.contextmanager
def _our_directory():
    """Inductor's cache directory is ours (and our checksums apply) in this thread, until exit."""
    from .kernel_compiler.runtime import disk_cache

    saved = {name: os.environ.get(name) for name in _ENV}
    depth = getattr(_state, "depth", 0)
    _state.depth = depth + 1
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(graphs_dir(disk_cache.cache_dir()))
    try:
        yield
    finally:
        _state.depth = depth
        for name, value in saved.items():  # Triton's directory too, if Inductor set it meanwhile
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _active() -> bool:
    return getattr(_state, "depth", 0) > 0


# ===--------------------------------------------------------------------------===
# Checksummed entries: Inductor's readers and writers wrapped, active only inside tile_caches
# ===--------------------------------------------------------------------------===
def seal(content: bytes) -> bytes:
    return _CHECKSUM_MAGIC + hashlib.sha256(content).hexdigest().encode() + b"\n" + content


def unseal(data: bytes) -> bytes | None:
    """The content of a sealed entry, or None when it is damaged."""
    head, newline, content = data.partition(b"\n")
    if not newline or not head.startswith(_CHECKSUM_MAGIC):
        return None
    if hashlib.sha256(content).hexdigest().encode() != head[len(_CHECKSUM_MAGIC):]:
        return None
    return content


def _warn_damaged(path: str, problem: str) -> None:
    warnings.warn(f"inductor_tile: damaged graph cache entry {path}: {problem}; deleting it and recompiling",
                  stacklevel=4)
    try:
        os.unlink(path)
    except OSError:
        pass


def _yields_location(original) -> bool:
    """Whether ``iterate_over_candidates`` yields (entry, bytes, found locally) rather than
    (entry, bytes): torch versions differ."""
    import inspect

    annotation = str(inspect.signature(original.__func__).return_annotation)
    if "tuple[" in annotation:
        return "bool" in annotation.split("tuple[", 1)[1].split("]", 1)[0]
    from torch._inductor.codecache import GuardedCache

    return "in_local in cls.iterate_over_candidates" in inspect.getsource(GuardedCache.find_guarded_entry)


def _sealed_candidates(original):
    """``GuardedCache.iterate_over_candidates`` that checks and strips our checksums inside tile_caches."""
    import pickle

    with_location = _yields_location(original)

    def iterate_over_candidates(cls, local, remote_cache, key):
        if not _active():
            yield from original.__func__(cls, local, remote_cache, key)
            return
        if not local:
            return
        subdir = cls._get_tmp_dir_for_key(key)
        if not os.path.isdir(subdir):
            return
        for name in sorted(os.listdir(subdir)):
            if name.startswith("."):
                continue  # a concurrent writer's temporary file
            path = os.path.join(subdir, name)
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            content = unseal(data)
            if content is None:
                _warn_damaged(path, "its content does not match its checksum")
                continue
            try:
                entry = pickle.loads(content)
            except Exception as e:  # noqa: BLE001 - a checksummed entry that does not load is stale
                _warn_damaged(path, f"it does not load ({type(e).__name__}: {e})")
                continue
            _check_wrapper_module(entry)
            yield (entry, content, True) if with_location else (entry, content)

    iterate_over_candidates.__wrapped__ = original
    return classmethod(iterate_over_candidates)


def _check_wrapper_module(entry) -> None:
    """A compiled graph's wrapper module file (PyCodeCache, named by the hash of its text) must hold
    the entry's source; a damaged one is deleted so that loading the entry writes it anew."""
    source, key = getattr(entry, "source_code", None), getattr(entry, "cache_key", None)
    if not isinstance(source, str) or not isinstance(key, str):
        return
    from torch._inductor.codecache import get_path

    path = get_path(key, "py")[2]
    try:
        with open(path, encoding="utf-8") as f:
            intact = f.read() == source
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError):
        intact = False
    if not intact:
        _warn_damaged(path, "the wrapper module differs from the cached graph's source")


def _sealed_writer(cls, original):
    from torch._inductor.codecache import sha256_hash, write_atomic

    def write_to_local_cache(key: str, content: bytes) -> None:
        if not _active():
            return original(key, content)
        path = os.path.join(cls._get_tmp_dir_for_key(key), sha256_hash(content))
        write_atomic(path, seal(content), make_dirs=True)

    write_to_local_cache.__wrapped__ = original
    return staticmethod(write_to_local_cache)


_tile_autograd_keys: set[str] = set()
_installed: list[bool] = []


def _recording_autograd_key(original):
    """``autograd_cache_key`` that remembers the keys computed for tile compiles."""
    def autograd_cache_key(*args, **kwargs):
        result = original(*args, **kwargs)
        if _active():
            _tile_autograd_keys.add(result[0])
        return result

    autograd_cache_key.__wrapped__ = original
    return autograd_cache_key


def _redirected_save(original):
    """``AOTAutogradCache.save`` that writes a tile graph's entry into our directory even when it
    runs outside our compile (AOTAutograd saves the entry after compiling the backward lazily,
    at the first backward call)."""
    def save(key, *args, **kwargs):
        if key in _tile_autograd_keys and not _active():
            with _our_directory():
                return original(key, *args, **kwargs)
        return original(key, *args, **kwargs)

    save.__wrapped__ = original
    return staticmethod(save)


def _install_checksums() -> bool | None:
    """Wrap the FX-graph and AOTAutograd caches' local reads and writes (once per process).

    Returns whether the AOTAutograd cache can be used for tile graphs (its entries kept in our
    directory; without the hooks this needs, it stays off for them), or None when the FX-graph
    cache's hooks are missing (another torch version): then there is no graph cache."""
    from torch._inductor import codecache

    with _patch_lock:
        if _installed:
            return _installed[0]
        base = getattr(codecache, "GuardedCache", None)
        fx = codecache.FxGraphCache
        if not (base is not None and isinstance(base.__dict__.get("iterate_over_candidates"), classmethod)
                and isinstance(fx.__dict__.get("_write_to_local_cache"), staticmethod)
                and hasattr(codecache, "write_atomic") and hasattr(codecache, "sha256_hash")
                and hasattr(torch_compiler_config(), "cache_key_tag")):
            _installed.append(None)  # another torch: no graph cache (Inductor's caches stay off for us)
            return None
        base.iterate_over_candidates = _sealed_candidates(base.__dict__["iterate_over_candidates"])
        fx._write_to_local_cache = _sealed_writer(fx, fx.__dict__["_write_to_local_cache"].__func__)
        autograd_ok = False
        try:
            from torch._functorch._aot_autograd import autograd_cache
        except ImportError:
            autograd_cache = None
        aot = getattr(autograd_cache, "AOTAutogradCache", None)
        if (aot is not None and callable(getattr(autograd_cache, "autograd_cache_key", None))
                and isinstance(aot.__dict__.get("save"), staticmethod)
                and isinstance(aot.__dict__.get("_write_to_local_cache"), staticmethod)
                and issubclass(aot, base)):
            autograd_cache.autograd_cache_key = _recording_autograd_key(autograd_cache.autograd_cache_key)
            aot.save = _redirected_save(aot.__dict__["save"].__func__)
            aot._write_to_local_cache = _sealed_writer(aot, aot.__dict__["_write_to_local_cache"].__func__)
            autograd_ok = True
        _installed.append(autograd_ok)
        return autograd_ok
