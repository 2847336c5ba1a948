"""h-tvgaps probe: Swin's shifted-window masked softmax (stage-1 shapes) and a CNN stem's NCHW ->
channels-last copy, tile (variants) vs Inductor in one process; kernel time by CUDA events."""
import os, sys, torch
os.environ.setdefault("TILE_GRAPH_CACHE", "0")
from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend
from model_benchmarks.vision_models import shifted_window_softmax

def stem(x):
    return (x * 0.5).contiguous(memory_format=torch.channels_last)

def bn_silu_mean(x, mean, var, weight, bias):
    y = torch.nn.functional.silu(torch.nn.functional.batch_norm(x, mean, var, weight, bias, training=False, eps=1e-5))
    return y, y.mean((2, 3), keepdim=True)

def bench(fn, args, n=50):
    for _ in range(5): fn(*args)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(n):
        start.record(); fn(*args); fn(*args); fn(*args); end.record(); torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 3 * 1000)
    return sorted(times)[len(times) // 2]

def variant(fn, args, backend, **patch):
    torch._dynamo.reset(); metrics.reset()
    with config.patch(**patch):
        compiled = torch.compile(fn, backend=backend)
        out = compiled(*args)
        t = bench(compiled, args)
    return out, t, len(metrics.kernel_sources)

g = torch.Generator(device="cuda").manual_seed(0)
dev = "cuda"
swin_args = (torch.randn(4096, 3, 49, 49, device=dev, generator=g).half(), torch.randn(169, 3, device=dev, generator=g).half(),
             torch.randint(0, 169, (2401,), device=dev, generator=g), torch.randint(0, 9, (56, 56), device=dev, generator=g).half())
ref = shifted_window_softmax(*[a.double() if a.is_floating_point() else a for a in swin_args])
print(f"{'case':34s} {'us':>8s} {'kernels':>7s} {'max err':>8s}")
for label, backend, patch in [("swin softmax inductor", "inductor", {}), ("swin softmax tile", tile_backend, {})]:
    out, t, k = variant(shifted_window_softmax, swin_args, backend, **patch)
    print(f"{label:34s} {t:8.1f} {k if backend != 'inductor' else '-':>7} {(out.double() - ref).abs().max().item():8.1e}")
for batch in (128, 256):
    x = torch.randn(batch, 3, 224, 224, device=dev, generator=g).half()
    ref = stem(x.double())
    for label, backend, patch in [("inductor", "inductor", {}), ("tile", tile_backend, {})]:
        out, t, k = variant(stem, (x,), backend, **patch)
        gbs = 2 * x.numel() * 2 / t / 1e3
        print(f"{'stem b%d %s' % (batch, label):34s} {t:8.1f} {gbs:6.0f}GB/s {(out.double() - ref).abs().max().item():8.1e}")

x = torch.randn(128, 144, 56, 56, device=dev, generator=g).half().contiguous(memory_format=torch.channels_last)
params = [torch.rand(144, device=dev, generator=g).half() + 0.5 for _ in range(4)]
ref = bn_silu_mean(x.double(), *(p.double() for p in params))
for label, backend in [("inductor", "inductor"), ("tile", tile_backend)]:
    (y, m), t, k = variant(bn_silu_mean, (x, *params), backend)
    gbs = 2 * x.numel() * 2 / t / 1e3
    err = max((y.double() - ref[0]).abs().max().item(), (m.double() - ref[1]).abs().max().item())
    print(f"{'bn_silu_mean 128x144x56x56 ' + label:34s} {t:8.1f} {gbs:6.0f}GB/s {err:8.1e}")

def per_kernel(fn, args, backend):
    """Each kernel's time (us a call, torch.profiler) of `fn` compiled by `backend`."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=backend)
    for _ in range(3): compiled(*args)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(10): compiled(*args)
        torch.cuda.synchronize()
    times = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            times[e.name] = times.get(e.name, 0.0) + e.device_time / 10
    return times

for label, backend in [("inductor", "inductor"), ("tile", tile_backend)]:
    for name, us in per_kernel(bn_silu_mean, (x, *params), backend).items():
        print(f"  bn_silu_mean {label:8s} {us:8.1f} us  {name[:70]}")
