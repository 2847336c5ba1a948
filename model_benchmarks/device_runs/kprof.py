"""Per-kernel GPU time of one suite model under Inductor and tile, same process (torch.profiler):
    python .probe/kprof.py MODEL [--top 25] [--training]
Prints each backend's kernel time per forward, then the kernels by total time side by side."""
import argparse, collections, os, sys
import torch
sys.path.insert(0, os.getcwd())
os.environ.setdefault("TILE_GRAPH_CACHE", "0")
from model_benchmarks import models
from model_benchmarks.backends import resolve_compiler

p = argparse.ArgumentParser()
p.add_argument("model"); p.add_argument("--top", type=int, default=25); p.add_argument("--steps", type=int, default=10)
args = p.parse_args()
spec = models.resolve([args.model], False)[0]
model = models.build_model(spec, False, device="cuda", dtype=torch.float16).eval()
inputs = models.model_inputs(spec, model, False, device="cuda")
tables = {}
for backend in ("inductor", "tile"):
    torch._dynamo.reset()
    fn = torch.compile(model, backend=resolve_compiler(backend))
    with torch.no_grad():
        for _ in range(3): fn(**inputs)
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(args.steps): fn(**inputs)
            torch.cuda.synchronize()
    per = collections.defaultdict(lambda: [0.0, 0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per[e.name][0] += e.device_time / args.steps; per[e.name][1] += 1
    tables[backend] = per
    print(f"{backend}: {sum(v[0] for v in per.values()):.0f} us of kernels a forward, "
          f"{sum(v[1] for v in per.values()) // args.steps} launches")
for backend, per in tables.items():
    print(f"== {backend} top kernels (us a forward, launches)")
    for name, (us, n) in sorted(per.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"{us:8.1f} {n // args.steps:4d}  {name[:90]}")
