"""Run each kernel_limits case once per backend between spin-kernel separators, for ncu (limits_ncu.sh).

    python3 .probe/limits_ncu.py run BACKEND          # under ncu --profile-from-start off
    python3 .probe/limits_ncu.py table A.csv [B.csv]  # ncu's raw CSVs -> a compact table
"""
import csv
import sys

CASES = ["cross_entropy:8192x32000", "cross_entropy:4096x50257", "cross_entropy:64x32000",
         "cross_entropy_bwd:8192x32000", "cross_entropy_bwd:4096x50257", "softmax:64x8192", "softmax:1024x32768",
         "layernorm_bwd:16384x768", "layernorm_bwd:8192x4096", "rmsnorm_bwd:16384x2048", "rmsnorm_bwd:8192x4096",
         "layernorm:64x768"]
SEPARATOR = "spin"  # torch.cuda._sleep's kernel name contains it


def run(backend):
    import torch
    import torch._inductor.config

    from model_benchmarks.backends import resolve_compiler
    from model_benchmarks.micro_cases import CASES as MICRO

    torch._inductor.config.fx_graph_cache = False
    calls = []
    for item in CASES:
        name, shape = item.split(":")
        rows, cols = map(int, shape.split("x"))
        case = MICRO[name]
        inputs, _ = case.inputs(rows, cols, torch.float16, torch.device("cuda"), torch.Generator("cuda").manual_seed(0))
        torch._dynamo.reset()
        fn = torch.compile(case.fn, backend=resolve_compiler(backend))
        try:
            for _ in range(3):  # compile, autotune, warm
                fn(*inputs)
        except Exception as error:  # noqa: BLE001 - that case's separator stays, with nothing after it
            print(f"failed {item}: {type(error).__name__}: {str(error)[:200]}", flush=True)
            fn = None
        calls.append((item, fn, inputs))
        print(f"ready {item}", flush=True)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for item, fn, inputs in calls:
        torch.cuda._sleep(1000)
        if fn is not None:
            fn(*inputs)
    torch.cuda._sleep(1000)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def _number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def table(paths):
    """One line a kernel taking 5% or more of its case's time (the rest summed), per backend."""
    print("case|b|kernel|grid x block|regs|us|DRAM %|DRAM MB|warps act %|Minst  (b: t tile, i inductor)")
    scale = {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1, "Gbyte": 1e3}
    for path in paths:
        backend = path.rsplit("/", 1)[-1].split(".")[0][:1]  # t(ile) / i(nductor)
        lines = [line for line in open(path) if line.startswith('"')]
        if len(lines) < 3:
            print(f"{backend}: no ncu rows in {path}")
            continue
        rows = list(csv.reader(lines))
        head, units, data = rows[0], rows[1], rows[2:]
        col = {name: i for i, name in enumerate(head)}
        kname = col.get("Kernel Name", col.get("Function Name"))

        def get(row, metric, text=False):
            if metric not in col:
                return "?" if text else None
            return row[col[metric]] if text else _number(row[col[metric]])

        def us(row):
            value = get(row, "gpu__time_duration.sum")
            unit = units[col["gpu__time_duration.sum"]] if "gpu__time_duration.sum" in col else ""
            return value * {"nsecond": 1e-3, "msecond": 1e3, "second": 1e6}.get(unit, 1) if value is not None else 0.0

        def mb(row):
            parts = [get(row, m) for m in ("dram__bytes_read.sum", "dram__bytes_write.sum")]
            if None in parts:
                return "?"
            return f"{sum(v * scale.get(units[col[m]], 1e-6) for v, m in zip(parts, ('dram__bytes_read.sum', 'dram__bytes_write.sum'))):.1f}"

        cases: list[list] = []
        for row in data:
            if SEPARATOR in row[kname]:
                cases.append([])
            elif cases:
                cases[-1].append(row)
        for index, kernels in enumerate(cases[:len(CASES)]):
            total = sum(us(r) for r in kernels)
            label = CASES[index].replace("cross_entropy", "xent").replace("layernorm", "ln").replace("rmsnorm", "rms")
            small = [r for r in kernels if us(r) < 0.05 * total]
            for r in kernels:
                if r in small:
                    continue
                inst = get(r, "smsp__inst_executed.sum")
                name = r[kname].split("(")[0].replace("tile_red_", "").replace("triton_red_fused_", "").replace(
                    "triton_per_fused_", "")
                print("|".join([label, backend, name[:18], f"{get(r, 'launch__grid_size', True)}x"
                                  f"{get(r, 'launch__block_size', True)}", get(r, "launch__registers_per_thread", True),
                                  f"{us(r):.1f}", get(r, "dram__throughput.avg.pct_of_peak_sustained_elapsed", True),
                                  mb(r), get(r, "sm__warps_active.avg.pct_of_peak_sustained_active", True),
                                  f"{inst / 1e6:.1f}" if inst is not None else "?"]))
            if len(kernels) > 1:
                print(f"  = {total:.1f} us, {len(kernels)} kernels"
                      + (f" ({len(small)} under 5%: {sum(us(r) for r in small):.1f} us)" if small else ""))


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2])
    else:
        table(sys.argv[2:])
