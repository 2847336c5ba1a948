"""`@inductor_tile.jit` and `kernel[grid](*args, **constexprs)`.

A JITFunction binds launch arguments, specializes them (dtypes, constexprs,
divisibility by 16, ints equal to 1), compiles once per specialization and launches.
With TILE_INTERPRET=1 the kernel runs in the interpreter instead, program by program.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import logging
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Iterator

from ... import config as _config
from ...language.core import const, constexpr, current_semantic, tensor
from ..frontend.grouped_arguments import leaf_values, specialize_argument
from ..frontend.specialization import ArgSpec, annotated_scalar_type
from . import device_assert
from .function_source import function_source

#: one `ast.parse` at a time: CPython 3.11 keeps the AST conversion's recursion depth per interpreter,
#: so kernels parsed on two threads at once (a background precompile and codegen's front-end check)
#: can fail with "SystemError: AST constructor recursion depth mismatch"
AST_LOCK = threading.Lock()

#: shared-memory stages of loops of dots when a launch does not say (Triton's default on sm_80+)
DEFAULT_NUM_STAGES = 3

log = logging.getLogger("inductor_tile")


_ENV_BYTES = getattr(os.environ, "_data", None)  # POSIX: the bytes dict behind os.environ


def interpret_enabled() -> bool:
    """TILE_INTERPRET is set (read on every launch, cheaply: os.environ.get costs microseconds)."""
    if isinstance(_ENV_BYTES, dict) and os.name == "posix":
        value = _ENV_BYTES.get(b"TILE_INTERPRET")
        return value is not None and value not in (b"", b"0", b"false", b"False")
    return os.environ.get("TILE_INTERPRET", "0") not in ("", "0", "false", "False")


_background_lock = threading.Lock()
_background_pool: ThreadPoolExecutor | None = None


def _background() -> ThreadPoolExecutor:
    """Threads for ahead-of-launch compiles (LLVM and ptxas release the GIL while they work)."""
    global _background_pool
    with _background_lock:
        if _background_pool is None:
            workers = int(os.environ.get("TILE_COMPILE_THREADS", "0")) or min(8, os.cpu_count() or 1)
            _background_pool = ThreadPoolExecutor(workers, thread_name_prefix="tile-compile")
        return _background_pool


def _is_constexpr_annotation(annotation: Any) -> bool:
    if annotation is constexpr:
        return True
    return isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr"


def _is_const_annotation(annotation: Any) -> bool:
    if annotation is const:
        return True
    # a string annotation (quoted, or made a string by `from __future__ import annotations`)
    return isinstance(annotation, str) and annotation.strip("'\"").split(".")[-1] == "const"


_defer_sources = threading.local()


@contextlib.contextmanager
def sources_read_when_needed() -> Iterator[None]:
    """@jit functions defined inside read their source text at its first need, not at once: for
    generated modules, whose kernels get their cache keys from the module's text (codegen/runtime.py),
    so that a warm start, which only looks kernels up, reads no source."""
    previous = getattr(_defer_sources, "on", False)
    _defer_sources.on = True
    try:
        yield
    finally:
        _defer_sources.on = previous


class JITFunction:
    """A kernel (or helper) written in the tile language."""

    debug = False  # @jit(debug=True): device assertions are compiled in (as with TILE_DEBUG=1)
    unused_result_message: str | None = None  # @must_use_result: a call whose result is dropped is an error

    def __init__(self, fn: Callable, do_not_specialize: tuple[str, ...] = (), repr: Callable | None = None):
        self.fn = fn
        self.repr_fn = repr  # @jit(repr=f): f(specialization) names each compiled kernel (Triton's option)
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.signature = inspect.signature(fn)
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in self.signature.parameters.values()):
            raise TypeError(f"@jit function `{fn.__name__}` cannot take *args or **kwargs")
        self.arg_names = list(self.signature.parameters)
        self.constexpr_names = {
            name for name, p in self.signature.parameters.items() if _is_constexpr_annotation(p.annotation)
        }
        self.const_names = {  # pointers the kernel only reads (`ptr: tl.const`)
            name for name, p in self.signature.parameters.items() if _is_const_annotation(p.annotation)
        }
        self.scalar_annotations = {  # scalars passed as the type they are annotated with (`n: tl.int64`)
            name: ty for name, p in self.signature.parameters.items()
            if (ty := annotated_scalar_type(p.annotation)) is not None
        }
        self.do_not_specialize = set(do_not_specialize)
        filename = inspect.getsourcefile(fn)
        self.filename = filename or "<unknown>"
        self.first_line = fn.__code__.co_firstlineno  # where inspect finds it too (its first decorator)
        if filename is None or not getattr(_defer_sources, "on", False):
            self._read_source()  # now, while its file's parse serves its neighbours (or inspect's OSError)
        self.cache: dict[tuple, Any] = {}  # full specialization key -> CompiledKernel
        self.launch_cache: dict[tuple, Any] = {}  # fast binder key -> CompiledKernel

    def _read_source(self) -> str:
        src, self.first_line, node = function_source(self.fn, inspect.getsourcefile(self.fn), AST_LOCK)
        if node is not None:  # the names the body uses come from it once (the cache key), no second parse
            self._definition = (src, node)
        self.src = src
        return src

    def __getattr__(self, name: str) -> Any:
        if name == "src":  # read at the first need (sources_read_when_needed)
            return self._read_source()
        if name == "binder":  # made at the first launch (binder.py imports torch; a compile worker launches nothing)
            from .binder import make_binder

            binder = self.__dict__["binder"] = make_binder(self)
            return binder
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"JITFunction({self.__module__}:{self.__name__})"

    def kernel_name(self, specs: list[Any]) -> str:
        """The compiled kernel's name: the function's, or what `@jit(repr=f)`'s `f` gives for this
        specialization. `f` gets an object with `signature` (parameter -> type string: `*fp32`, `i32`,
        `constexpr`) and `constants` (parameter -> value, for constexprs and ints specialized as 1)."""
        if self.repr_fn is None:
            return self.__name__
        name = self.repr_fn(Specialization.of(specs))
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"@jit(repr=...) of `{self.__name__}` must return an identifier (a kernel name), "
                             f"got {name!r}")
        return name

    # --- source ------------------------------------------------------------
    def parse(self) -> ast.FunctionDef:
        src = self.src  # read first: reading it parses its file under the same lock
        with AST_LOCK:
            tree = ast.parse(src)
        fn = tree.body[0]
        assert isinstance(fn, ast.FunctionDef), "a @jit object must wrap a plain function"
        return fn

    @property
    def cache_key(self) -> str:
        """sha256 of this function's source, of every @jit function it calls (transitively: found
        by name in its globals and closure) and of the plain constants it reads from there.
        Computed once per JITFunction."""
        key = self.__dict__.get("_cache_key")
        if key is None:
            key = self._cache_key = _source_hash(self, set())
        return key

    def closure_vars(self) -> dict[str, Any]:
        if not self.fn.__closure__:
            return {}
        return {name: cell.cell_contents for name, cell in zip(self.fn.__code__.co_freevars, self.fn.__closure__)}

    # --- launching ---------------------------------------------------------
    def __getitem__(self, grid: Any) -> Callable[..., None]:
        def launcher(*args: Any, **kwargs: Any) -> Any:
            return self.run(*args, grid=grid, **kwargs)

        return launcher

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Inside an interpreted kernel a helper is a plain function call; the compiler inlines
        # helpers itself and never gets here.
        semantic = current_semantic()
        if not semantic.concrete:  # called by a builtin (a combine function): inline it here
            from ..frontend.inline import inline_jit_call

            return inline_jit_call(self, semantic, args, kwargs)
        from ..interpreter.assignments import interpretable

        bound = self.bind(args, kwargs)
        return interpretable(self)(**{k: constexpr(v) if k in self.constexpr_names and not isinstance(v, tensor) else v
                                      for k, v in bound.items()})

    def bind(self, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Match launch arguments to parameters, with a clear TypeError on a mismatch."""
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.__name__}[grid](...): {e} (parameters: {', '.join(self.arg_names)})") from None
        bound.apply_defaults()
        return dict(bound.arguments)

    def specialize(self, bound: dict[str, Any]) -> list[ArgSpec]:
        """One ArgSpec per parameter; a host TensorDescriptor or a tuple gives several (grouped_arguments.py)."""
        return [spec for name, value in bound.items() for spec in specialize_argument(
            name, value, name in self.constexpr_names, name not in self.do_not_specialize, name in self.const_names,
            self.scalar_annotations.get(name))]

    def launcher(self, num_warps: int = 4, **constexprs: Any) -> Any:
        """A `LaunchSite` for launches with these constexprs: `site(grid, *runtime_args)`, the
        cheapest launch for callers whose argument dtypes and devices never change (generated
        wrappers). See runtime/launch_site.py."""
        from .launch_site import LaunchSite

        return LaunchSite(self, num_warps, constexprs)

    def run(self, *args: Any, grid: Any, num_warps: int = 4, num_stages: int = DEFAULT_NUM_STAGES, num_ctas: int = 1,
            **kwargs: Any) -> Any:
        if num_ctas != 1:
            raise ValueError(f"{self.__name__}: num_ctas={num_ctas}: only one CTA per program is supported")
        if interpret_enabled():
            return self.run_interpreted(args, kwargs, grid, num_warps)
        try:
            key, values = self.binder(*args, **kwargs)
            compiled = self.launch_cache.get((key, num_warps, num_stages, _config.sanitize))
        except TypeError:  # wrong arguments, or an unhashable constexpr: the slow path explains or copes
            key, values, compiled = None, None, None
        if compiled is None:
            bound = self.bind(args, kwargs)
            values = tuple(bound.values())
            compiled = self.compile_for(bound, num_warps, num_stages)
            if key is not None:
                self.launch_cache[(key, num_warps, num_stages, _config.sanitize)] = compiled
        if grid.__class__ is not tuple or not 1 <= len(grid) <= 3:
            grid = resolve_grid(grid, dict(zip(self.arg_names, values)))
        elif len(grid) < 3:
            grid = grid + (1,) * (3 - len(grid))
        compiled.launch_values(self, values, grid)
        if device_assert.failures:  # a tl.device_assert failed in a CPU kernel (debug mode)
            device_assert.raise_failures()
        return compiled  # as Triton's launches do: `.asm`, `.name`

    def run_interpreted(self, args: tuple, kwargs: dict[str, Any], grid: Any, num_warps: int) -> None:
        from .interpret import interpret_launch

        bound = self.bind(args, kwargs)
        check_num_warps(self.__name__, num_warps)
        interpret_launch(self, bound, resolve_grid(grid, bound), num_warps)

    def precompile(self, specs: list[ArgSpec], target: str, num_warps: int = 4,
                   elsewhere: Callable[[], Future | None] | None = None,
                   num_stages: int = DEFAULT_NUM_STAGES) -> Future | None:
        """Start compiling one specialization in a background thread.

        A launch with exactly this specialization waits for it instead of compiling; if the
        background compile fails, the launch compiles again itself and raises the error there.
        The torch.compile backend calls this for every generated kernel while Inductor is still
        generating the rest, so a graph's kernels compile in parallel.

        `elsewhere`: starts the compile outside this process instead (a compile worker that
        fills the disk cache; its future's result is not a kernel, so the launch then loads
        the binary from the cache); when it returns None, a thread compiles as usual.
        Returns the compile's future (None if this specialization was already started).
        """
        key = (tuple(s.key() for s in specs), num_warps, num_stages, target, _config.sanitize)
        if key in self.cache:
            return None
        future = elsewhere() if elsewhere is not None else None
        if future is None:
            from ..compiler import compile_specialized

            future = _background().submit(compile_specialized, self, specs, target=target, num_warps=num_warps,
                                          num_stages=num_stages, sanitize=_config.sanitize,
                                          ir_text=False)  # IR texts made if someone reads them
        self.cache[key] = future
        return future

    def compile_for(self, bound: dict[str, Any], num_warps: int, num_stages: int = DEFAULT_NUM_STAGES) -> Any:
        """The slow path: full specialization, then compilation (once per specialization)."""
        check_num_warps(self.__name__, num_warps)
        specs = self.specialize(bound)
        target = launch_target(bound)
        sanitize = _config.sanitize
        key = (tuple(s.key() for s in specs), num_warps, num_stages, target, sanitize)
        compiled = self.cache.get(key)
        if isinstance(compiled, Future):
            try:
                compiled = self.cache[key] = compiled.result()
            except Exception:  # compile again in this thread, where the error belongs
                log.debug("background compile of %s failed; compiling at launch", self.__name__, exc_info=True)
                compiled = None
            if compiled is True:  # a compile worker filled the disk cache: load from there
                compiled = None
        if compiled is None:
            from ..compiler import compile_specialized

            compiled = compile_specialized(self, specs, target=target, num_warps=num_warps,  # reads config.sanitize
                                           num_stages=num_stages)
            self.cache[key] = compiled
        return compiled


class Specialization:
    """What `@jit(repr=f)` passes to `f`: `signature` (parameter -> type string) and `constants`
    (parameter -> value of every constexpr and of every int argument specialized as 1)."""

    def __init__(self, signature: dict[str, str], constants: dict[str, Any]):
        self.signature = signature
        self.constants = constants

    @classmethod
    def of(cls, specs: list[Any]) -> "Specialization":
        signature, constants = {}, {}
        for spec in specs:
            if spec.kind == "constexpr":
                signature[spec.name], constants[spec.name] = "constexpr", spec.value
            elif spec.equal_to_1:  # compiled as the constant 1
                signature[spec.name], constants[spec.name] = "constexpr", 1
            else:
                signature[spec.name] = spec.type.to_ir_string()
        return cls(signature, constants)

    def __repr__(self) -> str:
        return f"Specialization(signature={self.signature}, constants={self.constants})"


_PLAIN_CONSTANTS = (int, float, bool, str, type(None), constexpr)


def _referenced_values(jit_fn: JITFunction) -> dict[str, Any]:
    """The globals and closure values a function's body names (`a` and dotted chains `a.b.c`)."""
    namespace = dict(jit_fn.fn.__globals__)
    namespace.update(jit_fn.closure_vars())
    found: dict[str, Any] = {}
    current = jit_fn.src
    src, tree = jit_fn.__dict__.pop("_definition", (None, None))  # from the file's parse, if the text is still that
    for node in ast.walk(tree if src is current else jit_fn.parse()):
        chain: list[str] = []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in namespace:
            continue
        value, path = namespace[node.id], node.id
        found.setdefault(path, value)
        for attr in reversed(chain):
            try:
                value = getattr(value, attr)
            except Exception:
                break
            path = f"{path}.{attr}"
            found.setdefault(path, value)
    return found


def _source_hash(jit_fn: JITFunction, visiting: set[int]) -> str:
    import hashlib

    cached = jit_fn.__dict__.get("_cache_key")
    if cached is not None:
        return cached
    h = hashlib.sha256(jit_fn.src.encode())
    h.update(repr(sorted(jit_fn.do_not_specialize)).encode())
    visiting.add(id(jit_fn))
    for path, value in sorted(_referenced_values(jit_fn).items(), key=lambda item: item[0]):
        if isinstance(value, JITFunction):
            if id(value) in visiting:  # recursion: the name is enough
                h.update(f"{path}=<recursive {value.__name__}>".encode())
            else:
                h.update(f"{path}=jit:{_source_hash(value, visiting)}".encode())
        elif isinstance(value, _PLAIN_CONSTANTS):
            h.update(f"{path}={type(value).__name__}:{value!r}".encode())
    visiting.discard(id(jit_fn))
    return h.hexdigest()


class NumWarpsError(ValueError, AssertionError):
    """A launch's num_warps is not a power of two. Triton raises AssertionError here, our launches raised
    ValueError: this is both, so code written against either catches it."""


def check_num_warps(name: str, num_warps: int) -> None:
    if not _is_power_of_two(num_warps):
        raise NumWarpsError(f"{name}[grid](...): num_warps must be a power of 2, got {num_warps}")


def launch_target(bound: dict[str, Any]) -> str:
    """The target a launch runs on: where its tensors live (all must agree)."""
    values = [leaf for value in bound.values() for leaf in leaf_values(value)]  # in descriptors and tuples too
    devices = {value.device.type for value in values if hasattr(value, "data_ptr") and hasattr(value, "device")}
    if len(devices) > 1:
        raise ValueError(f"kernel arguments live on different devices: {sorted(devices)}")
    device = devices.pop() if devices else "cpu"
    if device == "cpu":
        return "cpu"
    if device == "cuda":
        from ..to_llvm.targets import gpu_target

        return gpu_target()  # "cuda", or "hip:<arch>" on a ROCm build of torch
    raise ValueError(f"tensors on {device} are not supported; use CPU or CUDA tensors")


def _is_power_of_two(n: int) -> bool:
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


def resolve_grid(grid: Any, bound: dict[str, Any]) -> tuple[int, int, int]:
    """A grid is a tuple of up to 3 ints, or a callable of the meta-parameters returning one."""
    if callable(grid):
        grid = grid(bound)
    if isinstance(grid, int):
        grid = (grid,)
    grid = tuple(int(g) for g in grid)
    if not 1 <= len(grid) <= 3:
        raise ValueError(f"grid must have 1 to 3 dimensions, got {grid}")
    if any(g < 0 for g in grid):
        raise ValueError(f"grid dimensions must not be negative, got {grid}")
    return grid + (1,) * (3 - len(grid))  # type: ignore[return-value]


def jit(fn: Callable | None = None, *, do_not_specialize: tuple[str, ...] = (), repr: Callable | None = None,
        **unused: Any) -> Any:
    """Decorator: compile `fn` as a tile kernel (or helper). Usable as @jit or @jit(...).
    `repr`: a function of the specialization naming each compiled kernel (see `JITFunction.kernel_name`)."""
    def make(f: Callable) -> JITFunction:
        kernel = JITFunction(f, tuple(do_not_specialize), repr=repr)
        kernel.debug = bool(unused.get("debug", False))  # tl.device_assert compiled in
        return kernel

    return make if fn is None else make(fn)


def must_use_result(message: str = "") -> Callable[[JITFunction], JITFunction]:
    """Decorator over @jit (Triton's `triton.must_use_result`): calling the helper as a statement, dropping
    its result, is a compile error naming it, followed by `message`."""
    def mark(fn: JITFunction) -> JITFunction:
        if not isinstance(fn, JITFunction):
            raise TypeError("must_use_result decorates a @jit function (put it above @jit)")
        fn.unused_result_message = message
        return fn

    return mark
