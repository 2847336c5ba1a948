"""tile's one-time CUDA costs and warm first launches (gc.sh driver).  `fill`: compile 6 small kernels into
TILE_CACHE_DIR; `warm`: a fresh process times the cuda.bindings import, cuInit and the primary context, then
each kernel's first launch (the first one after the driver start) and one later launch, from the disk cache."""
import sys
import time

import torch

SOURCE = '''
import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def gc_probe_{i}(x_ptr, out_ptr, n, XBLOCK: tl.constexpr):
    i = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=i < n) * {i}.5 + 1.0, mask=i < n)
'''


def main() -> None:
    mode = sys.argv[1]
    x = torch.randn(4096, device="cuda")
    torch.cuda.synchronize()
    clock = time.perf_counter
    row = {}
    start = clock()
    import cuda.bindings.driver  # noqa: F401 - torch may have imported it already
    row["import"] = clock() - start
    from inductor_tile.kernel_compiler.runtime import cuda_launcher

    start = clock()
    cuda_launcher._driver()
    row["cuInit"] = clock() - start
    start = clock()
    cuda_launcher._make_context_current(0)
    row["context"] = clock() - start
    from inductor_tile.codegen.runtime import load_kernel
    from inductor_tile.kernel_compiler.runtime import disk_cache

    firsts, laters = [], []
    for i in range(6):
        out = torch.full_like(x, float("nan"))
        start = clock()
        site = load_kernel(f"gc_probe_{i}", SOURCE.format(i=i)).launcher(4, XBLOCK=1024)
        site.run((4, 1, 1), x, out, 4096)
        firsts.append(clock() - start)
        start = clock()
        site.run((4, 1, 1), x, out, 4096)
        laters.append(clock() - start)
        torch.cuda.synchronize()
        torch.testing.assert_close(out, x * (i + 0.5) + 1.0)
    if mode == "warm":
        assert disk_cache.stats.compiles == 0, "compiled: the cache was not filled by `fill`"
        ms = lambda s: f"{1000 * s:.2f}"  # noqa: E731
        print(f"ms: import {ms(row['import'])} | cuInit {ms(row['cuInit'])} | context {ms(row['context'])} | first "
              f"launches {' '.join(ms(s) for s in firsts)} | later {ms(sum(laters) / len(laters))}")


main()
