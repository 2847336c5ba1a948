"""An import shim that makes `import triton` / `import triton.language as tl` give inductor_tile.

Used by the conformance tool (`triton_conformance.py`) to run Triton's own language tests
against this compiler: `install(device)` puts modules named `triton`, `triton.language`,
`triton.language.extra(.libdevice, .cuda.libdevice)`, `triton.runtime(.errors, .jit, .driver)`,
`triton.compiler(.errors)`, `triton.testing` and `triton._internal_testing` in sys.modules.
Names inductor_tile lacks resolve to a `Missing` placeholder, so that test modules import;
using one raises `MissingFeature` naming it, which the tool reports. Nothing here is Triton's
code: the helpers of `_internal_testing` are written from what the tests need.
"""

from __future__ import annotations

import importlib.machinery
import re
import sys
import types
from typing import Any

import numpy as np
import torch

import inductor_tile
import inductor_tile.language as _tl
from inductor_tile.kernel_compiler.errors import CompilationError, CompileTimeAssertionFailure
from inductor_tile.kernel_compiler.runtime.device_assert import DeviceAssertionError
from inductor_tile.kernel_compiler.runtime.jit import JITFunction as _JITFunction
from inductor_tile.language.semantic import TileTypeError, TileValueError

MODULES = ("triton", "triton.language", "triton.language.core", "triton.language.extra",
           "triton.language.extra.libdevice", "triton.language.extra.cuda", "triton.language.extra.cuda.libdevice",
           "triton.language.math", "triton.runtime", "triton.runtime.errors", "triton.runtime.jit",
           "triton.runtime.driver", "triton.compiler", "triton.compiler.errors", "triton.testing",
           "triton._internal_testing", "triton.knobs", "triton.tools", "triton.tools.tensor_descriptor",
           "triton.tools.mxfp")


class MissingFeature(NotImplementedError):
    """A Triton name inductor_tile does not provide was used."""


class Missing:
    """Stands for a Triton name inductor_tile lacks: importable, comparable, unusable."""

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"<missing {self._name}>"

    def _fail(self, *args: Any, **kwargs: Any):
        raise MissingFeature(f"`{self._name}` is not provided by inductor_tile")

    __call__ = _fail

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Missing(f"{self._name}.{attr}")

    def __getitem__(self, key: Any) -> Any:
        return Missing(f"{self._name}[...]")

    def __hash__(self) -> int:
        return hash(self._name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Missing) and other._name == self._name


class _Proxy(types.ModuleType):
    """A module whose unknown attributes are `Missing` placeholders (dunders excepted)."""

    def __init__(self, name: str, source: Any = None, **extra: Any):
        super().__init__(name)
        self._source = source
        self.__dict__.update(extra)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if self._source is not None and hasattr(self._source, attr):
            return getattr(self._source, attr)
        return Missing(f"{self.__name__}.{attr}")


# ===------------------------------------------------------------------------===
# triton.JITFunction and triton.jit
# ===------------------------------------------------------------------------===
class JITFunction(_JITFunction):
    """Triton's JITFunction API on inductor_tile's: `_unsafe_update_src` for tests that rewrite a kernel."""

    def _unsafe_update_src(self, new_src: str) -> None:
        self.src = new_src
        self.__dict__.pop("_cache_key", None)
        self.cache.clear()
        self.launch_cache.clear()

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> Any:
        args, kwargs, options = self._split_launch_options(args, kwargs)
        return super().run(*args, grid=grid, **kwargs, **options)

    def _split_launch_options(self, args: tuple, kwargs: dict[str, Any]) -> tuple[tuple, dict, dict]:
        """Triton's launch keywords, apart from the kernel's arguments: num_warps/num_stages/num_ctas (also
        given to a kernel parameter of that name, as Triton does), and other backends' compile options
        (`waves_per_eu`, ...) which mean nothing here and are dropped."""
        options = {name: kwargs[name] for name in LAUNCH_OPTIONS if name in kwargs}
        given = set(self.arg_names[:len(args)])  # parameters given positionally
        kwargs = {name: value for name, value in kwargs.items() if name not in given and
                  (name in self.arg_names or (name not in LAUNCH_OPTIONS and name not in IGNORED_OPTIONS))}
        if any(name in self.arg_names for name in options):  # a parameter named like an option: bind it here
            args, kwargs = tuple(self.bind(args, kwargs).values()), {}
        return args, kwargs, options

    def warmup(self, *args: Any, grid: Any = None, **kwargs: Any) -> Any:
        if not _compile_only_api:
            raise MissingFeature("`JITFunction.warmup` (Triton's compile-only API) is not provided by inductor_tile")
        args, kwargs, options = self._split_launch_options(args, kwargs)
        return WarmKernel(self, self.bind(args, kwargs), options)


#: Triton's launch options that inductor_tile's launches take
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas")
#: performance hints of Triton's backends with no meaning here (AMD, Intel, register limits): dropped. Options
#: that change results (`enable_fp_fusion`, `debug`, cooperative launches) are not dropped: the launch refuses them.
IGNORED_OPTIONS = ("waves_per_eu", "matrix_instr_nonkdim", "kpack", "maxnreg", "grf_mode")
#: registers a warm kernel reports (inductor_tile does not read ptxas's count back)
NOMINAL_REGISTERS = 32


class WarmKernel:
    """What `JITFunction.warmup(...)` returns: the compiled kernel, Triton's `n_regs`/`n_spills`/
    `metadata.shared` for occupancy arithmetic, and `kernel[grid](*all_args)` to launch it."""

    def __init__(self, fn: JITFunction, bound: dict[str, Any], options: dict[str, Any]):
        options = {**options}
        options.pop("num_ctas", None)
        self.fn, self.options = fn, options
        self.compiled = fn.compile_for(bound, **{"num_warps": 4, **options})  # a launch's default
        self.n_regs, self.n_spills = NOMINAL_REGISTERS, 0
        # a kernel without shared memory (every CPU kernel) reports one byte, so that occupancy
        # arithmetic written for GPUs (`max_shared_mem // shared`) stays defined
        self.metadata = types.SimpleNamespace(shared=self.compiled.shared_bytes or 1, name=self.compiled.name,
                                              num_warps=self.compiled.num_warps)
        self.asm, self.name = self.compiled.asm, self.compiled.name

    def _init_handles(self) -> None:
        pass

    def __getitem__(self, grid: Any) -> Any:
        def launch(*args: Any, **kwargs: Any) -> Any:
            return self.fn.run(*args, grid=grid, **kwargs, **self.options)

        return launch


class ASTSource:
    """`triton.compiler.ASTSource(fn, signature, constexprs)`: a @jit function and the types to compile it for.
    `signature` maps parameter names to type strings (`"*fp32"`, `"i32"`, `"constexpr"`); `constexprs` gives the
    constexpr values by name or, as newer Triton releases do, by a tuple holding the parameter's index."""

    def __init__(self, fn: Any, signature: dict[str, str], constexprs: dict[Any, Any] | None = None,
                 attrs: Any = None):
        self.fn, self.signature, self.attrs = fn, dict(signature), attrs
        self.constexprs = {fn.arg_names[key[0]] if isinstance(key, tuple) else key: value
                           for key, value in (constexprs or {}).items()}


def compile(src: Any, target: Any = None, options: dict[str, Any] | None = None) -> Any:
    """`triton.compile(ASTSource(...))`: compile without launching, for the shim's device (the front end's
    errors are inductor_tile's `CompilationError`s). Triton IR files are not compiled here."""
    if not isinstance(src, ASTSource):
        raise MissingFeature("`triton.compile(<Triton IR file>)` is not provided by inductor_tile")
    signature = {name: kind for name, kind in src.signature.items() if kind != "constexpr"}
    options = dict(options or {})
    return inductor_tile.compile(src.fn, signature, src.constexprs, target="cuda" if _device == "cuda" else "cpu",
                                 num_warps=options.get("num_warps", 4))


def jit(fn: Any = None, **options: Any) -> Any:
    def make(f: Any) -> JITFunction:
        kernel = JITFunction(f, tuple(options.get("do_not_specialize", ()) or ()), repr=options.get("repr"))
        kernel.debug = bool(options.get("debug", False))
        return kernel

    return make if fn is None else make(fn)


# ===------------------------------------------------------------------------===
# _internal_testing: dtype lists, random inputs, conversions
# ===------------------------------------------------------------------------===
INT_DTYPES = ["int8", "int16", "int32", "int64"]
UINT_DTYPES = ["uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]
#: element types the descriptor tests run with (Triton's: those of 8 to 32 bits, bfloat16 included)
TMA_DTYPES = sorted(set(INT_DTYPES + UINT_DTYPES + FLOAT_DTYPES + ["bfloat16"]) - {"int64", "uint64", "float64"})


def numpy_random(shape: Any, dtype_str: str, rs: np.random.RandomState | None = None, low: Any = None,
                 high: Any = None) -> np.ndarray:
    """Random test inputs as the tests expect: integers in [low, high) without zeros, standard normal floats,
    bfloat16 as float32 values with the low 16 bits cleared, bools."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    rs = rs or np.random.RandomState(seed=17)
    if dtype_str in INT_DTYPES + UINT_DTYPES:
        info = np.iinfo(getattr(np, dtype_str))
        low = info.min if low is None else max(low, info.min)
        high = info.max if high is None else min(high, info.max)
        x = rs.randint(low, high, shape, dtype=getattr(np, dtype_str))
        x[x == 0] = 1
        return x
    if dtype_str in FLOAT_DTYPES:
        return rs.normal(0, 1, shape).astype(dtype_str)
    if dtype_str == "bfloat16":
        bits = rs.normal(0, 1, shape).astype("float32").view("uint32") & np.uint32(0xFFFF0000)
        return bits.view("float32")
    if dtype_str in ("bool", "int1", "bool_"):
        return rs.normal(0, 1, shape) > 0.0
    if "float8" in (dtype_str or ""):
        return rs.randint(20, 40, shape, dtype=np.int8)
    raise RuntimeError(f"unknown dtype {dtype_str}")


def to_triton(x: np.ndarray, device: Any, dst_type: str | None = None) -> torch.Tensor:
    if dst_type and "float8" in dst_type:
        raise MissingFeature(f"fp8 tensors ({dst_type}) are not provided by inductor_tile")
    tensor = torch.from_numpy(np.array(x, copy=True)).to(device)  # a copy: tests reuse their arrays
    if x.dtype.name == "float32" and dst_type == "bfloat16":
        return tensor.bfloat16()
    return tensor


def to_numpy(x: Any) -> np.ndarray:
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"not a tensor: {x!r}")
    x = x.detach().cpu()
    return x.float().numpy() if x.dtype is torch.bfloat16 else x.numpy()


def str_to_triton_dtype(name: str) -> Any:
    aliases = {"bool": "int1", "float8_e4m3fn": "float8e4nv", "float8_e5m2": "float8e5"}
    return getattr(_language, aliases.get(name, name))


def torch_dtype_name(dtype: Any) -> str:
    if isinstance(dtype, _tl.dtype):
        return dtype.name
    match = re.match(r"^torch\.(\w+)$", str(dtype))
    if match:
        return match.group(1)
    raise TypeError(f"not a tile or torch dtype: {dtype!r}")


def reinterpret(tensor: torch.Tensor, dtype: Any) -> torch.Tensor:
    """The tensor's bits as another dtype of the same width (torch has every width we need)."""
    from inductor_tile.kernel_compiler.interpreter.builder import torch_dtype

    if isinstance(dtype, Missing):
        dtype()
    return tensor.view(torch_dtype(dtype))


_device = "cpu"


class _Target:
    def __init__(self, device: str):
        self.backend = "cuda" if device == "cuda" else "cpu"
        self.arch = 90 if device == "cuda" else "cpu"
        self.warp_size = 32 if device == "cuda" else 1


def _internal_testing() -> types.ModuleType:
    is_cuda = _device == "cuda"
    module = _Proxy("triton._internal_testing")
    module.__dict__.update(
        int_dtypes=INT_DTYPES, uint_dtypes=UINT_DTYPES, integral_dtypes=INT_DTYPES + UINT_DTYPES,
        float_dtypes=FLOAT_DTYPES, float_dtypes_with_bfloat16=FLOAT_DTYPES + ["bfloat16"],
        dtypes=INT_DTYPES + UINT_DTYPES + FLOAT_DTYPES, dtypes_with_bfloat16=INT_DTYPES + UINT_DTYPES + FLOAT_DTYPES
        + ["bfloat16"], torch_float8_dtypes=["float8_e4m3fn", "float8_e5m2"],
        torch_dtypes=["bool"] + INT_DTYPES + ["uint8"] + FLOAT_DTYPES + ["bfloat16"],
        tma_dtypes=TMA_DTYPES, is_interpreter=lambda: False, is_cuda=lambda: is_cuda, is_hip=lambda: False,
        is_hopper=lambda: is_cuda, is_hip_cdna=lambda: False, is_hip_cdna2=lambda: False,
        is_hip_cdna3=lambda: False, is_hip_cdna4=lambda: False, is_hip_gfx12=lambda: False, is_xpu=lambda: False,
        get_arch=lambda: "sm90" if is_cuda else "cpu", get_current_target=lambda: _Target(_device),
        numpy_random=numpy_random, to_triton=to_triton, to_numpy=to_numpy, str_to_triton_dtype=str_to_triton_dtype,
        torch_dtype_name=torch_dtype_name, supports_tma=lambda byval_only=False: False,
        tma_skip_msg=lambda byval_only=False: "TMA is not provided by inductor_tile",
        unwrap_tensor=lambda t: t,
    )
    import pytest

    module.requires_tma = pytest.mark.skip(reason="TMA is not provided by inductor_tile")
    return module


# ===------------------------------------------------------------------------===
# triton.testing's benchmark reports (ports run kernels, never benchmarks)
# ===------------------------------------------------------------------------===
class Benchmark(types.SimpleNamespace):
    """`triton.testing.Benchmark(x_names=..., ...)`: the description is kept, nothing is measured."""


def perf_report(benchmarks: Any) -> Any:
    """`@triton.testing.perf_report(...)`: the function stays callable; `.run(...)` measures nothing."""
    def wrap(fn: Any) -> Any:
        fn.benchmarks = benchmarks
        fn.run = lambda *args, **kwargs: None
        return fn

    return wrap


def _device_properties(device_index: Any = None) -> dict[str, int]:
    """`driver.active.utils.get_device_properties(i)`: an H100's numbers (ports size launches with them)."""
    if _device == "cuda" and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(device_index or 0)
        sms, warp = props.multi_processor_count, getattr(props, "warp_size", 32)
    else:
        sms, warp = 132, 32
    return {"max_shared_mem": 227 * 1024, "multiprocessor_count": sms, "max_num_regs": 65536, "warpSize": warp,
            "max_threads_per_sm": 2048, "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120}


def set_allocator(allocator: Any) -> None:
    """`triton.set_allocator(fn)`: Triton allocates global scratch memory (TMA descriptors made in a kernel)
    through it. Descriptors here are pointer arithmetic and need no scratch memory: accepted, never called."""
    if allocator is not None and not callable(allocator):
        raise TypeError(f"triton.set_allocator: expected a callable (size, alignment, stream), got {allocator!r}")


# ===------------------------------------------------------------------------===
# The modules
# ===------------------------------------------------------------------------===
_language = _Proxy("triton.language", _tl)


_compile_only_api = False


def install(device: str = "cpu", compile_only_api: bool = False) -> None:
    """Make `import triton...` resolve to inductor_tile for the rest of this process.
    `compile_only_api`: `JITFunction.warmup` compiles (for ported kernels that size launches from the
    compiled kernel); off, it raises `MissingFeature` (the conformance tool counts those tests as n.a.)."""
    global _device, _compile_only_api
    _device, _compile_only_api = device, compile_only_api
    if device == "cuda" and torch.cuda.is_available():
        torch.cuda.init()  # torch's lazy CUDA start-up looks for the real triton: let it run before the shim
    from inductor_tile.language import dtypes

    dtypes.LANGUAGE_MODULE = "triton.language"  # dtype reprs evaluate where the language is imported from
    libdevice = _Proxy("triton.language.extra.libdevice", _tl.extra.libdevice)
    cuda = _Proxy("triton.language.extra.cuda", _tl.extra.cuda, libdevice=libdevice)
    extra = _Proxy("triton.language.extra", _tl.extra, libdevice=libdevice, cuda=cuda)
    _language.__dict__.update(extra=extra, core=_language, math=_Proxy("triton.language.math", _tl.math),
                              standard=_language, semantic=_Proxy("triton.language.semantic"))
    errors = _Proxy("triton.runtime.errors", None, InterpreterError=type("InterpreterError", (Exception,), {}),
                    OutOfResources=type("OutOfResources", (Exception,), {}))
    torch_device = torch.device("cuda", 0) if device == "cuda" else torch.device("cpu")
    active = types.SimpleNamespace(get_current_target=lambda: _Target(device),
                                   get_current_device=lambda: 0,
                                   get_active_torch_device=lambda: torch_device,
                                   utils=types.SimpleNamespace(get_device_properties=_device_properties))
    driver = _Proxy("triton.runtime.driver", None, active=active)
    runtime_jit = _Proxy("triton.runtime.jit", None, JITFunction=JITFunction, TensorWrapper=torch.Tensor,
                         jit=jit)
    runtime = _Proxy("triton.runtime", None, errors=errors, driver=driver, jit=runtime_jit, JITFunction=JITFunction,
                     Config=inductor_tile.Config, Autotuner=inductor_tile.Autotuner)
    compiler_errors = _Proxy("triton.compiler.errors", None, CompilationError=CompilationError,
                             CompileTimeAssertionFailure=CompileTimeAssertionFailure)
    compiler = _Proxy("triton.compiler", None, errors=compiler_errors, CompilationError=CompilationError,
                      ASTSource=ASTSource, compile=compile)
    testing = _Proxy("triton.testing", inductor_tile.testing, perf_report=perf_report, Benchmark=Benchmark)
    errors_tuple = (CompilationError, TileTypeError, TileValueError, DeviceAssertionError, MissingFeature)
    triton = _Proxy("triton", None, language=_language, jit=jit, JITFunction=JITFunction, cdiv=inductor_tile.cdiv,
                    next_power_of_2=inductor_tile.next_power_of_2, Config=inductor_tile.Config,
                    autotune=inductor_tile.autotune, heuristics=inductor_tile.heuristics,
                    CompilationError=CompilationError, TritonError=errors_tuple, runtime=runtime,
                    compiler=compiler, testing=testing, reinterpret=reinterpret, __version__="3.3.0+inductor_tile",
                    knobs=_Proxy("triton.knobs"), set_allocator=set_allocator,
                    must_use_result=inductor_tile.must_use_result, compile=compile)
    from . import tensor_descriptor as _tensor_descriptor

    tensor_descriptor = _Proxy("triton.tools.tensor_descriptor", _tensor_descriptor)
    mxfp = _Proxy("triton.tools.mxfp")  # MXFP4Tensor, ...: Missing placeholders (fp4 is outside this project)
    tools = _Proxy("triton.tools", None, tensor_descriptor=tensor_descriptor, mxfp=mxfp)
    triton.__dict__["tools"] = tools
    internal = _internal_testing()
    triton.__dict__["_internal_testing"] = internal
    modules = {"triton": triton, "triton.language": _language, "triton.language.core": _language,
               "triton.language.extra": extra, "triton.language.extra.libdevice": libdevice,
               "triton.language.extra.cuda": cuda, "triton.language.extra.cuda.libdevice": libdevice,
               "triton.language.math": _language.math, "triton.runtime": runtime, "triton.runtime.errors": errors,
               "triton.runtime.jit": runtime_jit, "triton.runtime.driver": driver, "triton.compiler": compiler,
               "triton.compiler.errors": compiler_errors, "triton.testing": testing,
               "triton._internal_testing": internal, "triton.knobs": triton.knobs, "triton.tools": tools,
               "triton.tools.tensor_descriptor": tensor_descriptor, "triton.tools.mxfp": mxfp}
    for name, module in modules.items():
        module.__path__ = []  # a package, so `import triton.x.y` looks the submodules up in sys.modules
        if module.__spec__ is None:  # importlib.util.find_spec("triton") (torch asks) needs one
            module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        sys.modules[name] = module
