"""A fixed call site of a kernel: the launch path of generated wrappers, with the least host work.

`jit_fn.launcher(num_warps=4, XBLOCK=1024)` returns a `LaunchSite`, called as
`site(grid, *runtime_args)` with a 3-int grid and the kernel's non-constexpr arguments in
order. It serves callers that launch with the same constexprs every time and whose tensor
arguments keep their dtypes and devices from call to call, as the wrapper Inductor generates
for one graph does (Dynamo guards its inputs' dtypes and devices; its buffers are fixed).

After the first launch, the site runs a function generated for the argument classes it saw:
it reads each tensor's address once and hands the values straight to the compiled kernel's
runner when they satisfy what that kernel was specialized on: every address the kernel assumed
16-byte aligned still is (an address it assumed nothing about, such as a view at an offset,
may be anything), and every integer has the same specialization facts as before (divisible by
16, equal to 1, fits in 32 bits). Anything else (an assumed alignment broken, a new integer
fact, `TILE_INTERPRET`, `config.sanitize`, an argument of another class) takes the general
path, `jit_fn.run`, which specializes, compiles if needed and explains errors; every general
launch re-arms the fast path for what it compiled. On the CPU target a launch that runs on the
calling thread calls the kernel's compiled trampoline from that function itself (the picked tuple,
the frame and `CPUKernel.launch_addresses` cost 0.2-0.3 us a launch, as much as many small kernels run).
Generated wrappers call `site.run(grid, *args)`: once armed, the fast path's own function (one Python
call a launch, no argument tuple, a repeated integer checked by one comparison), which hands what it
does not cover to the general path, and defers to `__call__` while that is wrapped (the profiler).
"""

from __future__ import annotations

import operator
import os
from typing import Any

from ... import config as _config
from . import device_assert
from .generated_code import run_generated
from .jit import _ENV_BYTES, DEFAULT_NUM_STAGES, interpret_enabled

_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1


def int_facts(value: int) -> tuple[bool, bool, bool]:
    """What the compiler specializes an integer argument on."""
    return value & 15 == 0, value == 1, _I32_MIN <= value <= _I32_MAX


def assumed_aligned(key_part: Any) -> bool:
    """Whether a kernel compiled for this binder key part of a tensor may assume its address 16-byte aligned.
    Only a tensor key `(dtype, is_cuda, aligned)` that says unaligned frees the address (binder.spec_key)."""
    return not (key_part.__class__ is tuple and len(key_part) == 3 and key_part[2] is False)


class LaunchSite:
    def __init__(self, jit_fn: Any, num_warps: int, constexprs: dict[str, Any]):
        self.jit_fn = jit_fn
        self.num_warps = num_warps
        self.constexprs = dict(constexprs)
        self.runtime_names = [n for n in jit_fn.arg_names if n not in jit_fn.constexpr_names]
        unknown = set(self.constexprs) - set(jit_fn.arg_names)
        if unknown:
            raise TypeError(f"{jit_fn.__name__}.launcher(): no parameters named {sorted(unknown)}")
        self.fast_launches = 0  # how often the fast path ran (tests and profiling read it)
        self._fast = None
        # `site.run(grid, *args)`: what generated wrappers call; the fast path's own function once armed
        self.run = self.__call__

    def __repr__(self) -> str:
        consts = ", ".join(f"{k}={v}" for k, v in self.constexprs.items())
        return f"LaunchSite({self.jit_fn.__name__}, {consts}, num_warps={self.num_warps})"

    def __call__(self, grid: tuple, *args: Any) -> None:
        fast = self._fast
        if fast is not None:
            try:
                if fast(grid, args):
                    return
            except (AttributeError, TypeError, ValueError):  # an argument of another kind: nothing launched
                pass
        self.general(grid, args)

    def general(self, grid: tuple, args: tuple) -> None:
        """Launch through `jit_fn.run`, then arm the fast path for what it compiled."""
        fn = self.jit_fn
        fn.run(*args, grid=grid, num_warps=self.num_warps, **self.constexprs)
        if interpret_enabled() or _config.sanitize or len(args) != len(self.runtime_names):
            return
        try:
            key, values = fn.binder(*args, **self.constexprs)
        except TypeError:
            return
        compiled = fn.launch_cache.get((key, self.num_warps, DEFAULT_NUM_STAGES, False))
        if compiled is not None and getattr(compiled, "runner", None) is not None:
            self._fast = self._build_fast(args, key, values, compiled.runner)
            if self._fast is None:
                self.run = self.__call__

    def _build_fast(self, args: tuple, key: tuple, values: tuple, runner: Any):
        """`fast(grid, args) -> bool`: launch and return True, or return False (use the general path).
        `key` and `values`: `jit_fn.binder`'s specialization key and values (parameter order) of `args`,
        the launch that compiled `runner`."""
        names = [f"a{i}" for i in range(len(args))]
        key_of = dict(zip(self.jit_fn.arg_names, key))
        pointers, aligned, checks, scope = [], [], [], {}
        picks_pointers = hasattr(runner, "pick")  # runners with `pick` (CUDA, HIP, CPU) take addresses
        runtime_expr = {}
        for param, name, value in zip(self.runtime_names, names, args):
            if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
                pointers.append(f"p{name[1:]}")
                if assumed_aligned(key_of.get(param)):
                    if value.data_ptr() & 15:
                        return None  # a key that is not a tensor's: leave this launch to the general path
                    aligned.append(pointers[-1])  # the kernel may rely on it: checked at every launch
                runtime_expr[param] = pointers[-1] if picks_pointers else name
            elif value.__class__ is int:
                scope[f"_f{name}"], scope[f"_v{name}"] = int_facts(value), value  # the same value: the same facts
                checks.append(f"({name} != _v{name} and ({name} & 15 == 0, {name} == 1, {_I32_MIN} <= {name} <= "
                              f"{_I32_MAX}) != _f{name})")
                runtime_expr[param] = name
            elif value.__class__ in (float, bool):
                checks.append(f"{name}.__class__ is not {value.__class__.__name__}")
                runtime_expr[param] = name
            else:  # None, or an object the general path will explain
                return None
        full = []
        for param, value in zip(self.jit_fn.arg_names, values):
            if param in runtime_expr:
                full.append(runtime_expr[param])
            else:  # a constexpr: its value at this site (given, or the parameter's default)
                scope[f"_c_{param}"] = value
                full.append(f"_c_{param}")
        checks.append("_interpret_set() or _config.sanitize")
        if aligned:
            checks.insert(0, f"({' | '.join(aligned)}) & 15")
        values_tuple = f"({', '.join(full)}{',' if len(full) == 1 else ''})"
        direct = getattr(runner, "direct", None)  # a CPU kernel's trampoline: no pick, frame or method call
        if picks_pointers and direct is not None:
            from . import cpu_launcher

            launch = ["gx, gy, gz = grid", "total = gx * gy * gz",
                      "if total <= _serial_grid or _threads() == 1 or _parallel.get(total) is False:",
                      f"    _direct({''.join(full[i] + ', ' for i in runner.positions)}gx, gy, gz)",
                      "    if _assert_failures: _raise_assert_failures()",
                      "else:",
                      f"    _launch(_pick({values_tuple}), grid)"]
            scope.update({"_direct": direct, "_serial_grid": cpu_launcher.SERIAL_GRID, "_threads": cpu_launcher._threads,
                          "_parallel": runner.parallel})
        elif picks_pointers:
            launch = [f"_launch(_pick({values_tuple}), grid)"]
        else:
            launch = [f"_launch({values_tuple}, grid)", "if _assert_failures: _raise_assert_failures()"]
        launch.append("_site.fast_launches += 1")
        reads = [f"p{p[1:]} = a{p[1:]}.data_ptr()" for p in pointers]
        condition = " or ".join(checks)
        # `fast(grid, args) -> bool` for __call__; `run(grid, *args)`, the same launch that falls back
        # to the general path itself, for generated wrappers (one Python call a launch, no tuple)
        args_tuple = f"({', '.join(names)}{',' if len(names) == 1 else ''})"
        lines = ["def fast(grid, args):", f"    {', '.join(names)}, = args" if names else "    pass"]
        lines += [f"    {line}" for line in reads]
        lines += [f"    if {condition}:", "        return False"]
        lines += [f"    {line}" for line in launch] + ["    return True", ""]
        lines += [f"def run({', '.join(['grid'] + names)}):",
                  "    if _LaunchSite.__call__ is not _plain_call:  # wrapped (the profiler's launch reports)",
                  f"        return _site(grid{''.join(', ' + n for n in names)})", "    try:"]
        lines += [f"        {line}" for line in reads]
        lines += [f"        if not ({condition}):"] + [f"            {line}" for line in launch] + ["            return"]
        lines += ["    except (AttributeError, TypeError, ValueError):  # an argument of another kind: nothing launched",
                  "        pass", f"    _site.general(grid, {args_tuple})"]
        source = "\n".join(lines) + "\n"
        env = _ENV_BYTES if isinstance(_ENV_BYTES, dict) and os.name == "posix" else None
        scope.update({"_interpret_set": (lambda: env.get(b"TILE_INTERPRET") is not None and interpret_enabled())
                      if env is not None else interpret_enabled,
                      "_site": self, "_config": _config, "_LaunchSite": LaunchSite, "_plain_call": _PLAIN_CALL,
                      "_assert_failures": device_assert.failures, "_raise_assert_failures": device_assert.raise_failures})
        if picks_pointers:
            scope.update({"_launch": runner.kernel.launch, "_pick": runner.pick})
        else:
            scope["_launch"] = runner.launch
        run_generated(source, f"<launch site {self.jit_fn.__name__} {id(self):#x}>", scope)
        self.fast_source = source
        self.run = scope["run"]
        return scope["fast"]


_PLAIN_CALL = LaunchSite.__call__


class TunedLaunchSite:
    """`autotuner.launcher()`: the call site of an autotuned kernel, `site(grid, *runtime_args)`
    with a grid tuple or Triton's `grid(meta)` callable.

    The first launch with a new tuning key (the key arguments' values and every argument's
    dtype) goes through `Autotuner.run`, which tunes or finds the stored choice; later launches
    with that key go straight to a `LaunchSite` of the chosen config. A config with a pre-hook,
    or a kernel that is not a plain `@jit` function, always takes `Autotuner.run`.

    `autotuner.launcher(grid=fn)`: the site's own `grid(meta)`, a function of the plain-value arguments
    (sizes) and the config (as a generated wrapper's `cdiv(xnumel, XBLOCK)`); launched as
    `site.run(None, *args)` by a caller whose tensors keep their dtypes and devices (a LaunchSite's
    contract). A launch whose plain values all equal the last launch's then costs one comparison more
    than a LaunchSite's: the chosen site and its grid are remembered.
    """

    def __init__(self, tuner: Any, grid: Any = None):
        self.tuner = tuner
        self.jit_fn = tuner.fn
        self.grid = grid
        self._runtime_names = [n for n in tuner.arg_names if n not in getattr(tuner.fn, "constexpr_names", ())]
        self._sites: dict[tuple, tuple[dict, LaunchSite]] = {}
        self._scalars = None  # picks the plain-value arguments out of a launch's arguments (set at the first)
        self._last: tuple | None = None  # (scalar values, the chosen site's run, grid) of the last own-grid launch

    def run(self, grid: Any, *args: Any) -> None:
        """What generated wrappers call (as `LaunchSite.run`); `grid` None: the site's own."""
        last = self._last
        if grid is None and last is not None:
            try:
                if self._scalars(args) == last[0]:
                    last[1](last[2], *args)
                    return
            except (IndexError, RuntimeError):  # too few arguments, a tensor where a size was: the general path
                pass
        self(grid, *args)

    def __repr__(self) -> str:
        return f"TunedLaunchSite({self.tuner.__name__}, {len(self._sites)} tuned keys)"

    def __call__(self, grid: Any, *args: Any) -> None:
        own_grid = grid is None and self.grid is not None
        if own_grid:
            grid = self.grid
        try:
            key = self.tuner._fast_key(args, {})
            entry = self._sites.get(key)
        except TypeError:  # an unhashable key value: the autotuner copes
            key, entry = None, None
        if entry is None:
            self.tuner.run(*args, grid=grid)
            config = self.tuner.best_config
            if (key is not None and config is not None and config.pre_hook is None and hasattr(self.jit_fn, "launcher")
                    and config.num_stages == DEFAULT_NUM_STAGES):  # a LaunchSite launches with the default
                self._sites[key] = (dict(config.kwargs), self.jit_fn.launcher(config.num_warps, **config.kwargs))
            return
        config_kwargs, site = entry
        if callable(grid):  # Triton's grid(meta): the launch's arguments and the chosen config
            grid = grid({**config_kwargs, **dict(zip(self._runtime_names, args))})  # a fresh dict: holds no tensor
        grid = tuple(grid) + (1,) * (3 - len(grid))
        site(grid, *args)
        if own_grid:  # the next launch with these plain values (sizes, seeds) goes straight to the chosen site
            if self._scalars is None:
                positions = [i for i, a in enumerate(args) if a.__class__ in (int, float, bool)]
                self._scalars = (operator.itemgetter(*positions, positions[0]) if positions  # always a tuple
                                 else (lambda values: ()))
            self._last = (self._scalars(args), site.run, grid)
