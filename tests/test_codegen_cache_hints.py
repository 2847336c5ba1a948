"""Cache hints on the loads of generated GPU kernels (codegen/cache_hints.py), where Inductor's Triton
kernels have them (``config.cache_hints`` "on"): evict_last for broadcast and uncoalesced loads,
evict_first / evict_last inside reductions (evict_last where a later pass reads the rows again); by
default ("weights") only evict_last on the loads every row of a reduction shares; none on CPU kernels
or with ``config.cache_hints`` "off".

Generated on this CPU-only machine with the CUDA heuristics (the scheduler is told the nodes are on
"cuda", as tests/test_codegen_heuristics.py does): the kernels run on the CPU target, which ignores
the hints, and must match torch in float64; a generated kernel is compiled to PTX for sm_90 and
checked by ptxas."""

from __future__ import annotations

import platform
import re
import runpy

import pytest
import torch

from inductor_tile import config, graph_cache, metrics
from inductor_tile.scheduler import scheduling

pytestmark = pytest.mark.usefixtures("fresh_backend")

HINT = re.compile(r"eviction_policy='(\w+)'")


@pytest.fixture
def kernels(cuda_heuristics, monkeypatch):
    """Generate with the CUDA heuristics, untuned, hints on (conftest's cuda_heuristics records the kernels)."""
    monkeypatch.setattr(config, "cache_hints", True)
    return cuda_heuristics


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * 1.5 + 0.25


def _compile_check(fn, *args) -> str:
    """Compile `fn` with backend tile, compare with torch in float64; the source of its one kernel."""
    torch._dynamo.reset()
    metrics.reset()
    out = torch.compile(fn, backend="tile")(*args)
    ref = fn(*(a.double() if a.is_floating_point() else a for a in args))
    torch.testing.assert_close(out, ref.to(out.dtype), rtol=1e-4, atol=1e-4)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    assert len(metrics.kernel_sources) == 1, list(metrics.kernel_sources)
    return next(iter(metrics.kernel_sources.values()))


def _hints(source: str) -> dict[str, list[str]]:
    """Each pointer's loads' eviction policies, in source order ("" for none)."""
    out: dict[str, list[str]] = {}
    for line in source.splitlines():
        load = re.search(r"tl\.load\((\w+) ", line)
        if load:
            policy = HINT.search(line)
            out.setdefault(load.group(1), []).append(policy.group(1) if policy else "")
    return out


def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b)


def test_persistent_layer_norm_weights_evict_last_rows_evict_first(kernels):
    x, w, b = _rand(64, 768), _rand(768, seed=1), _rand(768, seed=2)
    source = _compile_check(layer_norm, x, w, b)
    assert "for roffset" not in source  # one block per row
    # rows read once (evict_first); weight and bias read by every row (broadcast: evict_last)
    assert _hints(source) == {"in_ptr0": ["evict_first"], "in_ptr1": ["evict_last"], "in_ptr2": ["evict_last"]}, source


def test_looped_reductions_keep_rows_read_again(kernels):
    # rows longer than a block: the statistics pass reads x, the normalization pass reads it again
    x, w, b = _rand(4, 20000), _rand(20000, seed=1), _rand(20000, seed=2)
    source = _compile_check(layer_norm, x, w, b)
    assert source.count("for roffset") == 2, source
    assert _hints(source) == {"in_ptr0": ["evict_last", "evict_first"], "in_ptr1": ["evict_last"],
                              "in_ptr2": ["evict_last"]}, source
    source = _compile_check(lambda x: torch.softmax(x, -1), x)
    loads = _hints(source)["in_ptr0"]
    assert len(loads) >= 2 and loads[-1] == "evict_first" and set(loads[:-1]) == {"evict_last"}, source


def test_pointwise_hints_broadcast_and_uncoalesced_loads_only(kernels, monkeypatch):
    x, bias = _rand(48, 96), _rand(96, seed=1)
    source = _compile_check(lambda x, b: torch.relu(x + b), x, bias)
    assert _hints(source) == {"in_ptr0": [""], "in_ptr1": ["evict_last"]}, source
    # a transposed read in a 1-D kernel steps by 48 elements: not coalesced
    monkeypatch.setattr(config, "tiled_pointwise", "off")
    source = _compile_check(lambda x: x.t().contiguous() * 2.0, x)
    assert _hints(source) == {"in_ptr0": ["evict_last"]}, source
    # a gather through indices: not coalesced either (the index load itself is)
    ids = torch.randint(0, 96, (200,), generator=torch.Generator().manual_seed(3))
    source = _compile_check(lambda v, i: v[i] + 1.0, bias, ids)
    assert sorted(_hints(source).values()) == [[""], ["evict_last"]], source


def test_skip_l1_cache_as_inductor_configures_it(kernels):
    import torch._inductor.config as inductor_config

    x, y, bias = _rand(48, 96), _rand(48, 96, seed=1), _rand(96, seed=2)
    with inductor_config.patch({"triton.skip_l1_cache": True}):
        source = _compile_check(lambda x, y, b: x * 2.0 + y + b, x, y, bias)
    loads = [line for line in source.splitlines() if "tl.load(" in line]
    assert len(loads) == 3, source
    assert sum("cache_modifier='.cg'" in line for line in loads) == 2, source  # x and y, read once
    assert all("cache_modifier" not in line for line in loads if "evict_last" in line), source  # the bias
    assert "cache_modifier" not in _compile_check(lambda x, y, b: x * 2.0 + y + b, x, y, bias)


@pytest.fixture
def weights_mode(cuda_heuristics, monkeypatch):
    """Generate with the CUDA heuristics, untuned, hints in the default mode ("weights")."""
    monkeypatch.setattr(config, "cache_hints", "weights")
    return cuda_heuristics


def test_default_mode_is_weights():
    assert config.cache_hints == "weights"


def test_weights_mode_persistent_layer_norm(weights_mode):
    # the weight and bias, read by every row: evict_last; the rows (read once) get no hint
    x, w, b = _rand(64, 768), _rand(768, seed=1), _rand(768, seed=2)
    source = _compile_check(layer_norm, x, w, b)
    assert "for roffset" not in source
    assert _hints(source) == {"in_ptr0": [""], "in_ptr1": ["evict_last"], "in_ptr2": ["evict_last"]}, source
    # RMSNorm's weight too
    source = _compile_check(lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w, x, w)
    assert _hints(source) == {"in_ptr0": [""], "in_ptr1": ["evict_last"]}, source


def test_weights_mode_looped_reductions_hint_only_the_weights(weights_mode):
    # a looped layer norm reads x twice: no hint on either pass (only "on" keeps the first pass in L2)
    x, w, b = _rand(4, 20000), _rand(20000, seed=1), _rand(20000, seed=2)
    source = _compile_check(layer_norm, x, w, b)
    assert source.count("for roffset") == 2, source
    assert _hints(source) == {"in_ptr0": ["", ""], "in_ptr1": ["evict_last"], "in_ptr2": ["evict_last"]}, source
    assert "eviction_policy" not in _compile_check(lambda x: torch.softmax(x, -1), x)


def test_weights_mode_leaves_per_row_and_pointwise_loads_alone(weights_mode):
    # a value per row (indexed by the row only) is broadcast along the reduced dim, not shared by rows
    x, m, bias = _rand(64, 768), _rand(64, 1, seed=1), _rand(768, seed=2)
    source = _compile_check(lambda x, m: ((x - m) * (x - m)).sum(-1), x, m)
    assert "eviction_policy" not in source, source
    # pointwise kernels get none, not even a broadcast bias
    assert "eviction_policy" not in _compile_check(lambda x, b: torch.relu(x + b), x, bias)
    # a gather through indices inside a reduction: the table rows depend on the row's index
    ids = torch.randint(0, 64, (32,), generator=torch.Generator().manual_seed(3))
    source = _compile_check(lambda t, i: t[i].sum(-1), x, ids)
    assert "eviction_policy" not in source, source
    # one row (a sum of every element): its elements are read once
    source = _compile_check(lambda x, w: (x * w).sum(), bias, _rand(768, seed=4))
    assert "eviction_policy" not in source, source


def test_no_hints_when_off_or_on_the_cpu(kernels, monkeypatch):
    x, w, b = _rand(64, 768), _rand(768, seed=1), _rand(768, seed=2)
    hinted = _compile_check(layer_norm, x, w, b)
    monkeypatch.setattr(config, "cache_hints", False)
    plain = _compile_check(layer_norm, x, w, b)
    assert "eviction_policy" in hinted and "eviction_policy" not in plain
    assert re.sub(r", eviction_policy='\w+'", "", hinted) == plain  # the hints are the only difference
    monkeypatch.setattr(scheduling, "_heuristics_device", lambda nodes: "cpu")
    for mode in (True, "on", "weights"):
        monkeypatch.setattr(config, "cache_hints", mode)
        assert "eviction_policy" not in _compile_check(layer_norm, x, w, b)


def test_switch_enters_cache_keys(kernels, monkeypatch):
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
    from inductor_tile.kernel_compiler.runtime import disk_cache

    with_hints = graph_cache.identity()
    with config.patch(cache_hints=False):
        assert graph_cache.identity() != with_hints
    with config.patch(cache_hints="weights"):
        assert graph_cache.identity() != with_hints
    x, w, b = _rand(64, 768), _rand(768, seed=1), _rand(768, seed=2)
    _compile_check(layer_norm, x, w, b)
    monkeypatch.setattr(config, "cache_hints", False)
    _compile_check(layer_norm, x, w, b)
    keys = set()
    for fn, signature, constexprs in kernels:
        specs = [spec_from_signature(n, "constexpr", constexprs[n]) if n in constexprs
                 else spec_from_signature(n, signature[n], divisible_by_16=signature[n].startswith("*"))
                 for n in fn.arg_names]
        keys.add(disk_cache.kernel_key(fn, specs, 4, "cuda:90"))
    assert len(kernels) == 2 and len(keys) == 2


def test_environment_switch(monkeypatch):
    for value, mode in (("0", "off"), ("off", "off"), ("1", "on"), ("on", "on"), ("weights", "weights"),
                        ("", "weights")):  # empty: the default
        monkeypatch.setenv("TILE_CACHE_HINTS", value)
        assert runpy.run_path(config.__file__)["cache_hints"] == mode, value


needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")


@needs_ptxas
def test_hints_reach_the_ptx(kernels, monkeypatch):
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    x, w, b = _rand(64, 768), _rand(768, seed=1), _rand(768, seed=2)
    _compile_check(layer_norm, x, w, b)
    monkeypatch.setattr(config, "cache_hints", False)
    _compile_check(layer_norm, x, w, b)
    ptx = []
    for fn, signature, constexprs in kernels:
        specs = [spec_from_signature(n, "constexpr", constexprs[n]) if n in constexprs
                 else spec_from_signature(n, signature[n], divisible_by_16=signature[n].startswith("*"))
                 for n in fn.arg_names]
        ptx.append(compile_specialized(fn, specs, target="cuda:90", num_warps=4, native=False).asm["ptx"])
        check_ptx(ptx[-1], "sm_90", fn.__name__)
    hinted, plain = ptx
    loads = re.findall(r"ld\.global\.\S+", hinted)
    assert any("L1::evict_last" in load for load in loads), loads  # weight, bias
    assert any("L1::evict_first" in load for load in loads), loads  # the rows
    assert "L1::evict" not in plain and "L2::cache_hint" not in plain


@needs_ptxas
def test_weights_mode_reaches_the_ptx_at_one_warp(weights_mode):
    # the tuner's choice for rows of 768 (Inductor's shape): one row per program on one warp; the weight
    # and bias loads carry L1::evict_last with an L2 evict_last policy, the rows' 128-bit loads none
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    x, w, b = _rand(64, 768), _rand(768, seed=1), _rand(768, seed=2)
    _compile_check(layer_norm, x, w, b)
    (fn, signature, constexprs), = weights_mode
    constexprs = {**constexprs, "XBLOCK": 1, "RBLOCK": 1024}
    specs = [spec_from_signature(n, "constexpr", constexprs[n]) if n in constexprs
             else spec_from_signature(n, signature[n].replace("fp32", "fp16"), divisible_by_16=True)
             for n in fn.arg_names]
    ptx = compile_specialized(fn, specs, target="cuda:90", num_warps=1, native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", fn.__name__)
    loads = re.findall(r"ld\.global\.\S+", ptx)
    hinted = [load for load in loads if "L1::evict_last.L2::cache_hint" in load]
    assert len(hinted) == 8 and all(load.endswith(".v4.b32") for load in loads), loads  # 4 slots of 8 each
    assert len(loads) == 12 and "evict_first" not in ptx, loads
    assert ptx.count("createpolicy.fractional.L2::evict_last") >= 1
