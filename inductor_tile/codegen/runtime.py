"""Loading generated tile kernels from the compiled graph's wrapper module.

``@inductor_tile.jit`` reads a kernel's source with ``inspect``, so each generated
kernel is written to a file named by the hash of its source and imported from there.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile

_loaded: dict[str, object] = {}
#: the package of the modules generated kernels are loaded as
GENERATED_PACKAGE = "inductor_tile_generated"


def is_generated(fn) -> bool:
    """Whether `fn` (a JITFunction) is a kernel of the torch.compile backend, loaded by `load_kernel`."""
    return (getattr(fn, "__module__", None) or "").startswith(GENERATED_PACKAGE + ".")


def kernel_dir() -> str:
    path = os.environ.get("TILE_KERNEL_DIR") or os.path.join(tempfile.gettempdir(), f"inductor_tile_kernels_{os.getuid()}")
    os.makedirs(path, exist_ok=True)
    return path


def load_kernel(name: str, source: str, autotune: list[dict] | None = None,
                restore_value: list[str] | None = None):
    """The ``@inductor_tile.jit`` function ``name`` defined by ``source``.

    ``autotune``: launch configs (``XBLOCK``/``RBLOCK``/``num_warps`` dicts) to tune among
    on the first launch for each ``xnumel`` (and ``rnumel``); the kernel is then wrapped in
    ``inductor_tile.autotune`` and launched without those arguments.
    """
    key = hashlib.sha256(source.encode()).hexdigest()[:24]
    if autotune:  # around the plain kernel, so that what was precompiled for it serves the tuning
        tuned_key = f"{key}:{autotune!r}:{restore_value!r}"
        if tuned_key not in _loaded:
            _loaded[tuned_key] = _autotuned(load_kernel(name, source), autotune, restore_value)
        return _loaded[tuned_key]
    if key in _loaded:
        return _loaded[key]
    path = os.path.join(kernel_dir(), f"{name}_{key}.py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(source)
        os.replace(tmp, path)  # atomic: concurrent processes write the same text
    spec = importlib.util.spec_from_file_location(f"{GENERATED_PACKAGE}.{name}_{key}", path)
    module = importlib.util.module_from_spec(spec)
    from ..kernel_compiler.runtime.jit import sources_read_when_needed

    with sources_read_when_needed():
        spec.loader.exec_module(module)
    _key_from_text(module, source)
    fn = _loaded[key] = getattr(module, name)
    return fn


def _key_from_text(module, source: str) -> None:
    """Give the @jit functions of a generated module their cache keys (`JITFunction.cache_key`) from the
    module's text, when that text is all they depend on besides the compiler: the module's names are the
    package, its language and its own @jit functions, nothing else.  The compiler's own sources are part
    of every disk-cache key (`disk_cache.compiler_fingerprint`), so a key of the module's text serves as
    well as one of each function's text and the helpers and constants it names, and a warm start, which
    only looks kernels up, neither reads nor parses a kernel's source (0.5 ms a kernel)."""
    import inductor_tile
    import inductor_tile.language

    from ..kernel_compiler.runtime.jit import JITFunction

    own = []
    for name, value in vars(module).items():
        if name.startswith("__") or value is inductor_tile or value is inductor_tile.language:
            continue
        if not isinstance(value, JITFunction) or value.__module__ != module.__name__:
            return  # names something else: each function's key is made from what it names
        own.append(value)
    for fn in own:
        text = f"generated module\0{source}\0{fn.__name__}\0{sorted(fn.do_not_specialize)!r}"
        fn._cache_key = hashlib.sha256(text.encode()).hexdigest()


def size_bucket(n: int) -> int:
    """The tuning bucket of a kernel size: the next power of two (as Inductor's size hints). A kernel is
    tuned once per bucket, not once per size, which a growing dynamic size (a decoder's sequence) changes
    at every step."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


TUNING_WARMUP_MS = 5
TUNING_REP_MS = 20


def _autotuned(fn, configs: list[dict], restore_value: list[str] | None = None):
    from ..kernel_compiler.runtime.autotuner import Config, autotune

    candidates = []
    for launch in configs:
        launch = dict(launch)
        num_warps = launch.pop("num_warps", 4)
        candidates.append(Config(launch, num_warps=num_warps))
    key = [n for n in ("xnumel", "rnumel") if n in fn.arg_names]
    # a generated kernel takes microseconds to a millisecond: 5 ms of warm-up and 20 ms of timed runs
    # per candidate separate them (Triton's defaults, 25 + 100 ms, cost seconds per graph)
    tuner = autotune(configs=candidates, key=key, restore_value=restore_value, warmup=TUNING_WARMUP_MS,
                     rep=TUNING_REP_MS)(fn)
    tuner.show_progress = False  # tens of small tunings per model: the compile's own progress line says enough
    tuner.key_bucket = size_bucket
    return tuner


def check_frontend(fn, signature: dict[str, str], constexprs: dict[str, int]) -> None:
    """Run the tile compiler's front end (typing, shapes) on a generated kernel.

    Kernels compile lazily at their first launch; checking the front end while Inductor
    generates code turns a generator bug into a fallback instead of a failed model run.
    """
    from ..kernel_compiler.frontend.code_generator import generate_ttir
    from ..kernel_compiler.frontend.specialization import spec_from_signature
    from ..kernel_compiler.ir_builder import TTIRBuilder

    specs = []
    for name in fn.arg_names:
        if name in constexprs:
            specs.append(spec_from_signature(name, "constexpr", constexprs[name]))
        else:
            specs.append(spec_from_signature(name, signature[name]))
    generate_ttir(fn, specs, TTIRBuilder())
