"""Host cost of one kernel launch: our CUDAKernel against Triton and torch.

    python -m model_benchmarks.launch_overhead [--n 10000] [--size 1024]

Each row launches a tiny fp32 add (`out = x + y`) N times back to back after a warm-up and
reports wall-clock time / N, both before the final `torch.cuda.synchronize()` (the host
cost: what the Python side pays per launch) and including it. Rows:

- empty call: a Python call of a no-op lambda, the loop's own cost (in every row);
- cuLaunchKernel floor: `cuda.bindings` cuLaunchKernel with prepacked parameters;
- inductor_tile CUDAKernel: hand-written PTX, assembled with ptxas;
- triton: the same add as a @triton.jit kernel (skipped, with the reason, without Triton);
- torch.add: for reference.

Needs a GPU; not imported by anything.
"""

import argparse
import ctypes
import time
from collections.abc import Callable

import torch

from .ptx_samples import ADD_PTX

NUM_WARPS = 4
BLOCK = 32 * NUM_WARPS
tl = None  # triton.language once imported (the @triton.jit kernel finds it among these globals)


def time_launches(launch: Callable[[], object], n: int, warmup: int) -> tuple[float, float]:
    """(host us/launch before the final sync, wall us/launch including it)."""
    for _ in range(warmup):
        launch()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        launch()
    queued = time.perf_counter()
    torch.cuda.synchronize()
    done = time.perf_counter()
    return (queued - start) / n * 1e6, (done - start) / n * 1e6


def _ours(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, grid: tuple[int, int, int]):
    from inductor_tile.kernel_compiler.runtime.cuda_launcher import CUDAKernel
    from inductor_tile.kernel_compiler.runtime.cuda_tools import assemble_ptx
    major, minor = torch.cuda.get_device_capability()
    cubin = assemble_ptx(ADD_PTX, f"sm_{major}{minor}", "add_f32")
    kernel = CUDAKernel(cubin, "add_f32", ["*fp32", "*fp32", "*fp32", "i32"], NUM_WARPS, 0)
    launch, args = kernel.launch, (x, y, out, x.numel())
    return kernel, lambda: launch(args, grid)


def _driver_floor(kernel, x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, grid: tuple[int, int, int]):
    """cuLaunchKernel alone, its parameters packed once (what no Python launcher can beat)."""
    from cuda.bindings import driver
    fn = kernel._functions[torch.cuda.current_device()]
    values = [ctypes.c_uint64(x.data_ptr()), ctypes.c_uint64(y.data_ptr()), ctypes.c_uint64(out.data_ptr()),
              ctypes.c_uint32(x.numel())]
    params = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in values])
    address, stream = ctypes.addressof(params), driver.CUstream(torch.cuda.current_stream().cuda_stream)
    launch = driver.cuLaunchKernel
    gx, gy, gz = grid

    def run():
        launch(fn, gx, gy, gz, BLOCK, 1, 1, 0, stream, address, 0)

    run.keep_alive = (values, params)  # type: ignore[attr-defined]
    return run


def _ours_jit(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor):
    """The whole user path: kernel[grid](...) of a @inductor_tile.jit kernel (binding, cache lookup, launch)."""
    from .bench_kernels import add_kernel

    n = x.numel()
    grid = (-(-n // BLOCK),)
    return lambda: add_kernel[grid](x, y, out, n, BLOCK=BLOCK, num_warps=NUM_WARPS)


def _triton(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor):
    global tl
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)

    n = x.numel()
    grid = (triton.cdiv(n, BLOCK),)
    return lambda: add_kernel[grid](x, y, out, n, BLOCK_SIZE=BLOCK, num_warps=NUM_WARPS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="launches per row")
    parser.add_argument("--warmup", type=int, default=1_000, help="launches before timing")
    parser.add_argument("--size", type=int, default=1024, help="elements added per launch")
    options = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("launch_overhead needs a CUDA GPU")

    x = torch.randn(options.size, device="cuda")
    y = torch.randn(options.size, device="cuda")
    out = torch.empty_like(x)
    grid = (-(-options.size // BLOCK), 1, 1)
    kernel, ours = _ours(x, y, out, grid)
    rows: list[tuple[str, Callable[[], object] | None, str]] = [
        ("empty call", lambda: None, ""),
        ("cuLaunchKernel floor", _driver_floor(kernel, x, y, out, grid), ""),
        ("inductor_tile CUDAKernel", ours, ""),
        ("inductor_tile kernel[grid]", _ours_jit(x, y, out), ""),
    ]
    try:
        rows.append(("triton", _triton(x, y, out), ""))
    except ImportError as e:
        rows.append(("triton", None, f"skipped: Triton is not installed ({e})"))
    rows.append(("torch.add", lambda: torch.add(x, y, out=out), ""))

    print(f"device: {torch.cuda.get_device_name()}, {options.n} launches of a {options.size}-element fp32 add "
          f"(grid {grid[0]} x {BLOCK} threads), after {options.warmup} warm-up launches")
    print(f"{'launcher':<26}{'host us/launch':>16}{'wall us/launch':>16}")
    for name, launch, note in rows:
        if launch is None:
            print(f"{name:<26}{note}")
            continue
        if name != "empty call":  # each launcher must compute the right thing
            out.fill_(float("nan"))
            launch()
            torch.cuda.synchronize()
            torch.testing.assert_close(out, x + y, rtol=0, atol=0)
        host, wall = time_launches(launch, options.n, options.warmup)
        print(f"{name:<26}{host:>16.2f}{wall:>16.2f}")
    print("host: time until the last launch returned; wall: until the GPU finished (one final synchronize)")


if __name__ == "__main__":
    main()
