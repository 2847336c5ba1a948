"""`@inductor_tile.autotune` and `@inductor_tile.heuristics`, with Triton's API.

    @inductor_tile.autotune(configs=[inductor_tile.Config({"BLOCK": 128}, num_warps=4), ...], key=["n"])
    @inductor_tile.jit
    def kernel(x_ptr, n, BLOCK: tl.constexpr): ...

    kernel[lambda meta: (cdiv(meta["n"], meta["BLOCK"]),)](x, n)   # BLOCK comes from the chosen config

On the first launch with a new key (the values of the `key` arguments plus every tensor
argument's dtype) each candidate config (after `prune_configs_by`) is benchmarked with
`do_bench`; the fastest is remembered in memory and in the tuning database (tuning_db.py), so
another process with the same key reuses it without benchmarking. A config that fails (the
kernel does not compile for it, or the launch raises) is skipped, with its reason logged.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

log = logging.getLogger("inductor_tile")

#: configs above which tuning shows a progress line on stderr (when INFO logging is off)
PROGRESS_THRESHOLD = 4


@dataclass
class TuningStats:
    """Process-wide counters (for tests)."""

    tunings: int = 0  # keys benchmarked
    benchmarks: int = 0  # do_bench calls
    db_hits: int = 0  # keys answered by the tuning database

    def reset(self) -> None:
        self.tunings = self.benchmarks = self.db_hits = 0


stats = TuningStats()


class Config:
    """One candidate: meta-parameter values (`kwargs`) and launch options."""

    def __init__(self, kwargs: dict[str, Any], num_warps: int = 4, num_stages: int = 3, num_ctas: int = 1,
                 maxnreg: int | None = None, pre_hook: Callable[[dict[str, Any]], Any] | None = None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict[str, Any]:
        """The keyword arguments a launch with this config gets."""
        return {**self.kwargs, "num_warps": self.num_warps, "num_stages": self.num_stages}

    def to_json(self) -> dict[str, Any]:
        return {"kwargs": self.kwargs, "num_warps": self.num_warps, "num_stages": self.num_stages,
                "num_ctas": self.num_ctas, "maxnreg": self.maxnreg}

    def __str__(self) -> str:
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps: {self.num_warps}", f"num_stages: {self.num_stages}"]
        if self.maxnreg is not None:
            parts.append(f"maxnreg: {self.maxnreg}")
        return ", ".join(parts)

    __repr__ = __str__

    def _identity(self) -> tuple:
        return (tuple(sorted((k, repr(v)) for k, v in self.kwargs.items())), self.num_warps, self.num_stages,
                self.num_ctas, self.maxnreg)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())


def _base_jit(fn: Any) -> Any:
    while not hasattr(fn, "binder"):  # a JITFunction has a binder; wrappers have .fn
        fn = fn.fn
    return fn


class KernelInterface:
    """`kernel[grid](*args, **kwargs)` for wrappers around a JITFunction."""

    fn: Any
    arg_names: list[str]

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        def launcher(*args: Any, **kwargs: Any) -> Any:
            return self.run(*args, grid=grid, **kwargs)

        return launcher

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return _base_jit(self.fn).__name__

    @property
    def base_fn(self) -> Callable[..., Any]:
        """The Python function under the decorators (Triton's attribute)."""
        return _base_jit(self.fn).fn

    def named_args(self, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
        named = dict(zip(self.arg_names, args))
        named.update(kwargs)
        return named


class Heuristics(KernelInterface):
    """Meta-parameters computed from the other arguments: `values[name](meta) -> value`."""

    def __init__(self, fn: Any, arg_names: list[str], values: dict[str, Callable[[dict[str, Any]], Any]]):
        self.fn = fn
        self.arg_names = arg_names
        self.values = values

    def run(self, *args: Any, **kwargs: Any) -> Any:
        for name, compute in self.values.items():
            kwargs[name] = compute(self.named_args(args, kwargs))
        return self.fn.run(*args, **kwargs)


def heuristics(values: dict[str, Callable[[dict[str, Any]], Any]]) -> Callable[[Any], Heuristics]:
    """Decorator: compute meta-parameters from the launch's arguments (each callable gets a dict
    of every argument by name, including the meta-parameters known so far)."""

    def decorator(fn: Any) -> Heuristics:
        return Heuristics(fn, _base_jit(fn).arg_names, values)

    return decorator


class AutotuneError(RuntimeError):
    """No config could be benchmarked."""


class Autotuner(KernelInterface):
    def __init__(self, fn: Any, arg_names: list[str], configs: Sequence[Config], key: Sequence[str],
                 reset_to_zero: Sequence[str] | None = None, restore_value: Sequence[str] | None = None,
                 prune_configs_by: dict[str, Any] | None = None, warmup: float = 25, rep: float = 100,
                 do_bench: Callable[..., Any] | None = None, use_cache: bool = True):
        self.fn = fn
        self.arg_names = arg_names
        self.configs = list(configs) if configs else [Config({})]
        self.key = list(key)
        unknown = [name for name in self.key if name not in arg_names]
        if unknown:
            raise ValueError(f"autotune key {unknown} names no parameter of {self.__name__} ({', '.join(arg_names)})")
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        prune_configs_by = prune_configs_by or {}
        self.perf_model = prune_configs_by.get("perf_model")
        self.top_k = prune_configs_by.get("top_k", 1.0)
        self.early_config_prune = prune_configs_by.get("early_config_prune")
        self.warmup = warmup
        self.rep = rep
        self.user_do_bench = do_bench
        self.use_cache = use_cache
        self.cache: dict[tuple, Config] = {}
        self.timings: dict[Config, Any] = {}
        self.best_config: Config | None = None
        self.bench_time = 0.0
        self.configs_timings: dict[Config, Any] = {}
        self._by_fast_key: dict[tuple, Config] = {}  # launch arguments' key -> config (no dicts built)
        self.show_progress = True  # a progress line on a terminal (the backend's kernels: off)
        # integer key values -> their tuning bucket (None: the value itself). The backend's kernels tune
        # once per power-of-two bucket of their sizes, so a growing dynamic size does not tune at each step
        self.key_bucket: Callable[[int], int] | None = None

    # --- keys --------------------------------------------------------------
    def tuning_key(self, named: dict[str, Any]) -> tuple:
        values = []
        for name in self.key:
            value = named.get(name)
            values.append(str(value.dtype) if hasattr(value, "dtype") and hasattr(value, "data_ptr")
                          else self._bucket(value))
        dtypes = tuple(str(v.dtype) for v in named.values() if hasattr(v, "dtype") and hasattr(v, "data_ptr"))
        return tuple(values) + dtypes

    def _bucket(self, value: Any) -> Any:
        if self.key_bucket is None or isinstance(value, bool) or not isinstance(value, int):
            return value
        return self.key_bucket(value)

    def _db_key(self, named: dict[str, Any], key: tuple) -> dict[str, str]:
        from .disk_cache import compiler_fingerprint

        dtypes = [str(v.dtype) for v in named.values() if hasattr(v, "dtype") and hasattr(v, "data_ptr")]
        configs = hashlib.sha256(json.dumps([c.to_json() for c in self.configs], sort_keys=True,
                                            default=repr).encode()).hexdigest()
        return {"source_hash": _base_jit(self.fn).cache_key, "device": _device_identity(named),
                "key_values": json.dumps(list(key[:len(self.key)]), default=repr), "dtypes": json.dumps(dtypes),
                "configs": configs, "compiler_version": compiler_fingerprint()}

    # --- pruning -----------------------------------------------------------
    def prune_configs(self, named: dict[str, Any]) -> list[Config]:
        configs = self.configs
        if self.early_config_prune is not None:
            configs = list(self.early_config_prune(configs, named))
        if self.perf_model is not None:
            top_k = self.top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = int(len(configs) * top_k)
            top_k = max(1, int(top_k))
            if len(configs) > top_k:
                estimates = {config: self.perf_model(**named, **config.all_kwargs()) for config in configs}
                configs = sorted(estimates, key=estimates.get)[:top_k]
        return configs

    # --- benchmarking --------------------------------------------------------
    def _reset(self, named: dict[str, Any]) -> None:
        for name in self.reset_to_zero:
            named[name].zero_()

    def _bench(self, config: Config, args: tuple, kwargs: dict[str, Any], grid: Any, named: dict[str, Any]) -> Any:
        conflicts = set(kwargs) & set(config.kwargs)
        if conflicts:
            raise ValueError(f"conflicting meta-parameters: {', '.join(sorted(conflicts))}; they are given at the "
                             "launch and tuned by autotune; do not give them at the launch")
        full = {**named, **config.all_kwargs()}

        def kernel_call() -> None:
            if config.pre_hook is not None:
                config.pre_hook(full)
            self._reset(named)
            self.fn.run(*args, grid=grid, **kwargs, **config.all_kwargs())

        kernel_call.config = config  # type: ignore[attr-defined]  # lets a do_bench stub tell configs apart
        stats.benchmarks += 1
        if self.user_do_bench is not None:
            return self.user_do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))
        from ...testing import do_bench

        device = "cuda" if _device_identity(named).startswith("cuda") else "cpu"
        return do_bench(kernel_call, warmup=self.warmup, rep=self.rep, quantiles=(0.5, 0.2, 0.8), device=device)

    def _tune(self, args: tuple, kwargs: dict[str, Any], grid: Any, named: dict[str, Any]) -> Config:
        configs = self.prune_configs({**named})
        saved = {name: named[name].clone() for name in self.restore_value}
        # a progress line on stderr for long tunings, unless the per-config INFO lines are shown anyway
        progress = (self.show_progress and len(configs) > PROGRESS_THRESHOLD and sys.stderr.isatty()
                    and not log.isEnabledFor(logging.INFO))
        timings: dict[Config, Any] = {}
        failures: list[tuple[Config, str]] = []
        start = time.perf_counter()
        stats.tunings += 1
        try:
            for index, config in enumerate(configs):
                if progress:
                    sys.stderr.write(f"\r[inductor_tile] autotuning {self.__name__}: config {index + 1}/{len(configs)}")
                    sys.stderr.flush()
                try:
                    result = self._bench(config, args, kwargs, grid, named)
                except (KeyboardInterrupt, SystemExit):
                    raise
                except Exception as e:  # noqa: BLE001 - a failing config is skipped, never fatal
                    reason = _reason(e)
                    failures.append((config, reason))
                    log.info("autotune %s: config {%s} skipped: %s", self.__name__, config, reason)
                    continue
                finally:
                    for name, value in saved.items():
                        named[name].copy_(value)
                timings[config] = result
                log.info("autotune %s: config {%s}: %.4f ms", self.__name__, config, _main_time(result))
        finally:
            if progress:
                sys.stderr.write("\n")
                sys.stderr.flush()
        self.bench_time = time.perf_counter() - start
        if not timings:
            reasons = "\n".join(f"  {{{config}}}: {reason}" for config, reason in failures)
            raise AutotuneError(f"autotuning {self.__name__}: every config failed\n{reasons}")
        best = builtins.min(timings, key=lambda c: _main_time(timings[c]))
        self.configs_timings = timings
        log.info("autotune %s: chose {%s} (%.4f ms) out of %d configs in %.2fs", self.__name__, best,
                 _main_time(timings[best]), len(configs), self.bench_time)
        return best

    # --- launching ---------------------------------------------------------
    def _fast_key(self, args: tuple, kwargs: dict[str, Any]) -> tuple:
        """What `tuning_key` depends on, read without building the named-argument dict: the key
        arguments' values and every argument's dtype (None for plain values)."""
        positions = self.__dict__.get("_key_positions")
        if positions is None:
            positions = self._key_positions = [(self.arg_names.index(n), n) for n in self.key]
        values = tuple(args[i] if i < len(args) else kwargs.get(n) for i, n in positions)
        if self.key_bucket is not None:
            values = tuple(self._bucket(v) for v in values)
        dtypes = tuple(getattr(a, "dtype", None) for a in args)
        if kwargs:
            dtypes += tuple((n, getattr(v, "dtype", None)) for n, v in sorted(kwargs.items()))
        return values, dtypes

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> Any:
        if len(self.configs) > 1:
            try:
                fast = self._fast_key(args, kwargs)
                config = self._by_fast_key.get(fast)
            except TypeError:  # an unhashable key value: the full path copes
                fast, config = None, None
            if config is None:
                config = self._config_for(args, kwargs, grid)
                if fast is not None:
                    self._by_fast_key[fast] = config
        else:
            config = self.configs[0]
        self.best_config = config
        conflicts = set(kwargs) & set(config.kwargs) if kwargs else None
        if conflicts:
            raise ValueError(f"conflicting meta-parameters: {', '.join(sorted(conflicts))}; they are given at the "
                             "launch and tuned by autotune; do not give them at the launch")
        if config.pre_hook is not None:
            config.pre_hook({**self.named_args(args, kwargs), **config.all_kwargs()})
        return self.fn.run(*args, grid=grid, **kwargs, **config.all_kwargs())

    def launcher(self, grid: Any = None) -> Any:
        """A `TunedLaunchSite`: `site(grid, *runtime_args)`, tuning at the first launch of each
        tuning key and launching the chosen config through a `LaunchSite` after that; `grid`: the
        site's own `grid(meta)` (a function of the key arguments and the config only), used by
        `site.run(None, *runtime_args)`."""
        from .launch_site import TunedLaunchSite

        return TunedLaunchSite(self, grid)

    def _config_for(self, args: tuple, kwargs: dict[str, Any], grid: Any) -> Config:
        """The config for this launch's tuning key: remembered, stored in the tuning database, or tuned now."""
        named = self.named_args(args, kwargs)
        key = self.tuning_key(named)
        config = self.cache.get(key)
        if config is None:
            config = self._lookup(named, key)
            if config is None:
                config = self._tune(args, kwargs, grid, named)
                if self.use_cache:
                    from . import tuning_db

                    tuning_db.store(self._db_key(named, key), self.__name__, config.to_json(),
                                    [[c.to_json(), _jsonable(t)] for c, t in self.configs_timings.items()])
                self._reset(named)  # undo the benchmark runs' effect on accumulating outputs
            self.cache[key] = config
        return config

    def _lookup(self, named: dict[str, Any], key: tuple) -> Config | None:
        if not self.use_cache:
            return None
        from . import tuning_db

        stored = tuning_db.lookup(self._db_key(named, key))
        if stored is None:
            return None
        for config in self.configs:
            if config.to_json() == stored["config"]:
                stats.db_hits += 1
                log.info("autotune %s: using the stored config {%s}", self.__name__, config)
                return config
        return None


def _reason(e: BaseException) -> str:
    """One line: the exception's type and its message's last line (plus where, for a compile error)."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    if not lines:
        return type(e).__name__
    if len(lines) == 1:
        return f"{type(e).__name__}: {lines[0]}"
    return f"{type(e).__name__}: {lines[-1]} ({lines[0].rstrip(':')})"


def _main_time(result: Any) -> float:
    if isinstance(result, (list, tuple)):
        return float(result[0])
    return float(result)


def _jsonable(result: Any) -> Any:
    if isinstance(result, (list, tuple)):
        return [float(x) for x in result]
    return float(result)


def _device_identity(named: dict[str, Any]) -> str:
    """The device the kernel runs on: name and capability (CUDA) or CPU model and core count."""
    devices = {v.device for v in named.values() if hasattr(v, "device") and hasattr(v, "data_ptr")}
    cuda = [d for d in devices if d.type == "cuda"]
    if cuda:
        import torch

        index = cuda[0].index if cuda[0].index is not None else torch.cuda.current_device()
        major, minor = torch.cuda.get_device_capability(index)
        return f"cuda:{torch.cuda.get_device_name(index)}:sm_{major}{minor}"
    import os

    import llvmlite.binding as llvm

    from ..to_llvm import llvm_tools

    llvm_tools.initialize()
    return f"cpu:{llvm.get_host_cpu_name()}:{os.cpu_count()}"


def autotune(configs: Sequence[Config], key: Sequence[str], prune_configs_by: dict[str, Any] | None = None,
             reset_to_zero: Sequence[str] | None = None, restore_value: Sequence[str] | None = None,
             warmup: float = 25, rep: float = 100, do_bench: Callable[..., Any] | None = None,
             cache_results: bool = True) -> Callable[[Any], Autotuner]:
    """Decorator: tune a @jit kernel's meta-parameters over `configs`, once per value of the `key` arguments.

    `prune_configs_by` takes `early_config_prune(configs, named_args)`, and `perf_model(**named_args,
    **config_kwargs)` with `top_k` (a count, or a fraction <= 1.0). `reset_to_zero` names tensors
    zeroed before each benchmark run (and once after tuning); `restore_value` names tensors
    restored after each config's benchmark. `do_bench(kernel_call, quantiles=...)` replaces the
    benchmark (`kernel_call.config` tells which config it runs). `cache_results=False` keeps
    results out of the tuning database.
    """

    def decorator(fn: Any) -> Autotuner:
        return Autotuner(fn, _base_jit(fn).arg_names, configs, key, reset_to_zero, restore_value, prune_configs_by,
                         warmup, rep, do_bench, cache_results)

    return decorator
