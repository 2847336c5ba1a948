"""The device's copy bandwidth, the roofline every kernel's bytes/second is compared with.

Measured once per process and device with a torch copy (``dst.copy_(src)``: each byte is read
once and written once): 256 MB on a GPU timed with CUDA events, 32 MB on the CPU with the wall
clock; the best of several runs after a warm-up.
"""

from __future__ import annotations

import time

_measured: dict[str, float] = {}  # device type -> bytes per second

GPU_BYTES = 256 << 20
CPU_BYTES = 32 << 20
RUNS = 10


def copy_bandwidth(device: str) -> float:
    """Bytes per second that ``Tensor.copy_`` moves on ``device`` ("cpu" or "cuda"), counting
    the bytes read and the bytes written."""
    if device not in _measured:
        _measured[device] = _measure_cuda() if device == "cuda" else _measure_cpu()
    return _measured[device]


def _measure_cuda() -> float:
    import torch

    src = torch.empty(GPU_BYTES, dtype=torch.uint8, device="cuda").random_(0, 255)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    best = float("inf")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(RUNS):
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3)
    return 2 * GPU_BYTES / best


def _measure_cpu() -> float:
    import torch

    src = torch.randint(0, 255, (CPU_BYTES,), dtype=torch.uint8)
    dst = torch.empty_like(src)
    dst.copy_(src)
    best = float("inf")
    for _ in range(RUNS):
        start = time.perf_counter()
        dst.copy_(src)
        best = min(best, time.perf_counter() - start)
    return 2 * CPU_BYTES / best
