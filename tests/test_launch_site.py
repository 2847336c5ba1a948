"""LaunchSite (runtime/launch_site.py): the generated wrappers' launch path, on the CPU target."""

import torch

import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def scaled_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + alpha * y, mask=mask)


def _inputs(n, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n + 1, generator=g), torch.randn(n + 1, generator=g)


def _check(site, x, y, n, alpha=0.5):
    out = torch.full_like(x[:n], float("nan"))
    site((-(-n // 64), 1, 1), x, y, out, n, alpha)
    expected = x[:n].double() + alpha * y[:n].double()
    torch.testing.assert_close(out.double(), expected, rtol=1e-6, atol=1e-6)


def test_fast_path_after_the_first_launch():
    site = scaled_add.launcher(num_warps=4, BLOCK=64)
    x, y = _inputs(1000, 0)
    _check(site, x, y, 1000)
    assert site.fast_launches == 0  # the first launch specializes and compiles
    _check(site, x, y, 1000)
    _check(site, *_inputs(1000, 1), 1000)
    assert site.fast_launches == 2
    assert "data_ptr()" in site.fast_source and "(p0 | p1 | p2) & 15" in site.fast_source


def test_new_specialization_facts_take_the_general_path():
    site = scaled_add.launcher(num_warps=4, BLOCK=64)
    x, y = _inputs(1024, 2)
    _check(site, x, y, 1024)
    _check(site, x, y, 1024)
    fast = site.fast_launches
    _check(site, x, y, 1000)  # n no longer divisible by 16: another specialization
    _check(site, x[1:], y, 1000)  # an address not 16-byte aligned
    _check(site, x, y, 1)  # n == 1 is specialized into the code
    assert site.fast_launches == fast
    _check(site, x, y, 1)  # the general launch re-armed the fast path for n == 1
    assert site.fast_launches == fast + 1


def test_wrong_arguments_get_the_general_paths_error():
    site = scaled_add.launcher(num_warps=4, BLOCK=64)
    x, y = _inputs(256, 3)
    _check(site, x, y, 256)
    _check(site, x, y, 256)
    try:
        site((4, 1, 1), x, None, x, 256, 0.5)
    except Exception as e:  # the general path's error, not an AttributeError from the fast path
        assert "NoneType" not in type(e).__name__ and not isinstance(e, AttributeError), e
    else:
        raise AssertionError("a None pointer argument must not launch")


def test_tuned_site_tunes_once_per_key_then_launches_the_choice():
    """`autotuner.launcher()`: the first launch of a size tunes (or reads the tuning database),
    later ones go through a LaunchSite of the chosen config, with Triton's grid(meta)."""
    tuned = inductor_tile.autotune([inductor_tile.Config({"BLOCK": 32}), inductor_tile.Config({"BLOCK": 128})],
                                   key=["n"], cache_results=False)(scaled_add.__class__(scaled_add.fn))
    site = tuned.launcher()

    def grid(meta):
        return (-(-meta["n"] // meta["BLOCK"]),)

    for n, seed in [(1000, 4), (1000, 5), (1000, 6), (300, 7)]:
        x, y = _inputs(n, seed)
        out = torch.full_like(x[:n], float("nan"))
        site(grid, x, y, out, n, 0.25)
        torch.testing.assert_close(out.double(), x[:n].double() + 0.25 * y[:n].double(), rtol=1e-6, atol=1e-6)
    assert len(site._sites) == 2  # n = 1000 and n = 300: each tuned once
    (_, first), _ = site._sites.values()
    assert first.fast_launches == 1  # the third launch of n = 1000 (the second armed the fast path)


def _fresh_kernel():
    """scaled_add with an empty launch cache of its own, so a test can count the specializations it compiles."""
    return scaled_add.__class__(scaled_add.fn)


def _launch_view(site, x, y, n, out_offset, dtype=torch.float32, alpha=0.5):
    """Launch with `out` a NaN-poisoned view `out_offset` elements into its buffer; check against float64."""
    out = torch.full((n + out_offset,), float("nan"), dtype=dtype)[out_offset:]
    site((-(-n // 64), 1, 1), x, y, out, n, alpha)
    expected = x[:n].double() + alpha * y[:n].double()
    tol = 1e-6 if dtype == torch.float32 else 2e-3
    torch.testing.assert_close(out.double(), expected, rtol=tol, atol=tol)


def test_unaligned_views_take_the_fast_path_after_the_first_launch():
    """Views at an offset (a slice of a fused projection, fp16 at an odd element): the kernel compiled
    for them assumes nothing about those addresses, so later launches need not check them."""
    for dtype in (torch.float32, torch.float16):
        site = _fresh_kernel().launcher(num_warps=4, BLOCK=64)
        for seed in range(4):
            x, y = (t.to(dtype) for t in _inputs(1000, 10 + seed))
            _launch_view(site, x[1:], y[3:], 990, out_offset=1, dtype=dtype)
        assert site.fast_launches == 3, dtype
        assert ") & 15" not in site.fast_source  # no address is assumed aligned: none is checked ("(p0 | p1) & 15")


def test_unaligned_at_compile_time_then_aligned_runs_the_same_kernel():
    fn = _fresh_kernel()
    site = fn.launcher(num_warps=4, BLOCK=64)
    x, y = _inputs(1000, 20)
    _launch_view(site, x[1:], y, 992, out_offset=0)  # x unaligned; y and out aligned (checked from now on)
    compiled = len(fn.launch_cache)
    _launch_view(site, x[1:], y, 992, out_offset=0)
    _launch_view(site, *_inputs(1000, 21), 992, out_offset=0)  # x aligned now: what was assumed still holds
    assert site.fast_launches == 2
    assert len(fn.launch_cache) == compiled


def test_aligned_at_compile_time_then_unaligned_recompiles():
    fn = _fresh_kernel()
    site = fn.launcher(num_warps=4, BLOCK=64)
    x, y = _inputs(1000, 30)
    _launch_view(site, x, y, 992, out_offset=0)
    _launch_view(site, x, y, 992, out_offset=0)
    compiled, fast = len(fn.launch_cache), site.fast_launches
    assert fast == 1
    _launch_view(site, x, y, 992, out_offset=3)  # out was assumed aligned: the general path compiles anew
    assert site.fast_launches == fast and len(fn.launch_cache) == compiled + 1
    _launch_view(site, x, y, 992, out_offset=3)  # re-armed for the kernel that assumes nothing about out
    _launch_view(site, x, y, 992, out_offset=0)
    assert site.fast_launches == fast + 2 and len(fn.launch_cache) == compiled + 1


def test_tuned_site_launches_unaligned_views_on_the_fast_path():
    tuned = inductor_tile.autotune([inductor_tile.Config({"BLOCK": 32}), inductor_tile.Config({"BLOCK": 64})],
                                   key=["n"], cache_results=False)(_fresh_kernel())
    site = tuned.launcher()
    n = 990
    for seed in range(4):
        x, y = _inputs(1000, 40 + seed)
        out = torch.full((n + 1,), float("nan"))[1:]
        site(lambda meta: (-(-meta["n"] // meta["BLOCK"]),), x[1:], y[5:], out, n, 0.75)
        torch.testing.assert_close(out.double(), x[1:n + 1].double() + 0.75 * y[5:n + 5].double(), rtol=1e-6, atol=1e-6)
    ((_, chosen),) = site._sites.values()
    assert chosen.fast_launches == 2  # the first launch tuned, the second armed the chosen config's site


def test_cpu_fast_path_calls_the_kernels_trampoline_directly():
    """On the CPU target a serial launch goes from the site's function to the compiled trampoline
    (cpu_trampoline.py): no picked tuple, no frame, no launcher method in between."""
    from inductor_tile.kernel_compiler.runtime import cpu_launcher

    if not cpu_launcher.DIRECT_CALLS:
        import pytest

        pytest.skip("TILE_CPU_DIRECT_CALLS=0: launches go through ctypes")
    site = _fresh_kernel().launcher(num_warps=4, BLOCK=64)
    x, y = _inputs(1000, 50)
    _check(site, x, y, 1000)
    _check(site, x, y, 1000)
    assert "_direct(p0, p1, p2, a3, a4, gx, gy, gz)" in site.fast_source
    assert site.fast_launches == 1


def test_cpu_fast_path_hands_grids_worth_the_pool_to_it(monkeypatch):
    """A grid whose first launch was timed as worth splitting still goes to the thread pool from the fast path."""
    from inductor_tile.kernel_compiler.runtime import cpu_launcher

    monkeypatch.setattr(cpu_launcher, "PARALLEL_MIN_SECONDS", 0.0)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        site = _fresh_kernel().launcher(num_warps=4, BLOCK=64)
        pooled = []
        original = cpu_launcher.CPUKernel._launch_unsure_or_parallel
        monkeypatch.setattr(cpu_launcher.CPUKernel, "_launch_unsure_or_parallel",
                            lambda self, *a: (pooled.append(a[-1]), original(self, *a))[1])
        for seed in range(3):
            _check(site, *_inputs(4000, 60 + seed), 4000)
        assert site.fast_launches == 2
        assert pooled == [None, True, True]  # timed once, then split on the pool from the fast path
    finally:
        torch.set_num_threads(threads)


def test_run_is_the_armed_launch_and_falls_back_to_the_general_path():
    """`site.run(grid, *args)` (what generated wrappers call): the fast path's own function once armed,
    which hands anything it does not cover to the general path, and defers to a wrapped `__call__`."""
    from inductor_tile.kernel_compiler.runtime.launch_site import LaunchSite

    site = _fresh_kernel().launcher(num_warps=4, BLOCK=64)
    x, y = _inputs(1024, 70)
    out = torch.full((1024,), float("nan"))
    site.run((16, 1, 1), x, y, out, 1024, 0.5)  # general: compiles and arms
    assert site.run.__name__ == "run" and site.fast_launches == 0
    for n, offset in ((1024, 0), (1000, 0), (1000, 1)):  # the same facts; a new int fact; an unaligned view
        out = torch.full((n + offset,), float("nan"))
        site.run((-(-n // 64), 1, 1), x, y, out[offset:], n, 0.5)
        torch.testing.assert_close(out[offset:].double(), x[:n].double() + 0.5 * y[:n].double(), rtol=1e-6, atol=1e-6)
    assert site.fast_launches == 1
    seen = []
    original = LaunchSite.__call__
    try:
        LaunchSite.__call__ = lambda self, grid, *args: (seen.append(grid), original(self, grid, *args))[1]
        site.run((16, 1, 1), x, y, torch.empty(1024), 1024, 0.5)
    finally:
        LaunchSite.__call__ = original
    assert seen == [(16, 1, 1)]


def test_tuned_site_with_its_own_grid_launches_the_choice_directly():
    """`autotuner.launcher(grid=fn)`, as generated wrappers make it: after the launch that tunes, the
    same key values go straight to the chosen config's site with the remembered grid; a new size takes
    the tuning path again, and a size seen before is launched with its own grid."""
    tuned = inductor_tile.autotune([inductor_tile.Config({"BLOCK": 32}), inductor_tile.Config({"BLOCK": 128})],
                                   key=["n"], cache_results=False)(_fresh_kernel())
    site = tuned.launcher(grid=lambda meta: (-(-meta["n"] // meta["BLOCK"]),))
    for n, seed in [(1000, 60), (1000, 61), (1000, 62), (300, 63), (300, 64), (1000, 65)]:
        x, y = _inputs(n, seed)
        out = torch.full_like(x[:n], float("nan"))
        site.run(None, x, y, out, n, 0.5)
        torch.testing.assert_close(out.double(), x[:n].double() + 0.5 * y[:n].double(), rtol=1e-6, atol=1e-6)
    (chosen, first), (_, second) = site._sites.values()
    assert site._last[0] == (1000, 0.5, 1000) and site._last[2] == (-(-1000 // chosen["BLOCK"]), 1, 1)
    # n = 1000: the 2nd launch armed its site, the 3rd (remembered) and the 6th went fast; n = 300: the 5th armed
    assert (first.fast_launches, second.fast_launches) == (2, 0)
