"""Cold start (issue 18): what a process with empty caches pays per generated kernel.

- The TTIR and TTGIR pipelines verify the IR of the backend's generated kernels only when asked
  (TILE_VERIFY, TILE_DEBUG=1; the test suite sets TILE_VERIFY=end in conftest.py); kernels users write
  are always verified (passes/pipeline.verifies).
- A tuned reduction's candidate configs are all compiled by the compile workers as codegen emits the
  kernel, so the first launch benchmarks them without compiling any itself.
"""

import os

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.codegen import runtime
from inductor_tile.kernel_compiler.passes import pipeline

GENERATED_SOURCE = '''
import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def tile_poi_cold_scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 3.0 - 1.0, mask=mask)
'''


@inductor_tile.jit
def user_scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 3.0 - 1.0, mask=mask)


@pytest.fixture
def verified(monkeypatch):
    """The pipeline stages whose IR was verified, in order."""
    where = []
    check = pipeline._verify

    def recording(module, stage):
        where.append(stage)
        check(module, stage)

    monkeypatch.setattr(pipeline, "_verify", recording)
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")  # every launch compiles afresh
    for name in ("TILE_VERIFY", "TILE_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    return where


def _launch(kernel, n: int, block: int) -> None:
    gen = torch.Generator().manual_seed(n)
    x = torch.randn(n, generator=gen)
    out = torch.full((n,), float("nan"))
    kernel.cache.clear()
    kernel.launch_cache.clear()
    kernel[(inductor_tile.cdiv(n, block),)](x, out, n, BLOCK=block)
    torch.testing.assert_close(out.double(), x.double() * 3.0 - 1.0)


BOTH = ["after the TTIR pipeline", "after the TTGIR pipeline"]


@pytest.mark.parametrize("env, expected", [
    ({}, []),
    ({"TILE_VERIFY": "end"}, BOTH),
    ({"TILE_DEBUG": "1"}, BOTH),
    ({"TILE_VERIFY": "0"}, []),
])
def test_generated_kernels_are_verified_only_when_asked(verified, monkeypatch, env, expected):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    kernel = runtime.load_kernel("tile_poi_cold_scale", GENERATED_SOURCE)
    assert runtime.is_generated(kernel)
    _launch(kernel, 1000, 128)
    assert verified == expected


def test_verify_after_every_pass_covers_generated_kernels(verified, monkeypatch):
    monkeypatch.setenv("TILE_VERIFY", "1")
    _launch(runtime.load_kernel("tile_poi_cold_scale", GENERATED_SOURCE), 777, 64)
    per_pass = [stage for stage in verified if stage.startswith("after ") and "pipeline" not in stage]
    assert len(per_pass) >= len(pipeline.PIPELINE) + 3  # every TTIR pass and the TTGIR ones
    assert verified[-1] == "after the TTGIR pipeline"


def test_user_kernels_are_always_verified(verified):
    assert not runtime.is_generated(user_scale)
    _launch(user_scale, 1000, 128)
    assert verified == BOTH


def test_an_unverified_pipeline_makes_the_same_code(monkeypatch):
    """Verification only checks: the generated kernel's IR at every stage is the same without it."""
    from inductor_tile.kernel_compiler.compiler import compile_specialized

    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    kernel = runtime.load_kernel("tile_poi_cold_scale", GENERATED_SOURCE)
    x = torch.randn(300)
    specs = kernel.specialize(kernel.bind((x, x, 300), {"BLOCK": 64}))
    texts = []
    for setting in ("end", "0"):
        monkeypatch.setenv("TILE_VERIFY", setting)
        compiled = compile_specialized(kernel, specs, target="cuda:90", num_warps=4, native=False)
        assert compiled.verify is (setting == "end")
        texts.append({stage: compiled.asm[stage] for stage in ("ttir", "ttgir", "llir", "ptx")})
    assert texts[0] == texts[1]


def test_tuned_kernel_candidates_compile_in_workers_before_the_first_launch(tmp_path, monkeypatch):
    """Reduction kernels shaped as for a GPU (2-5 tuning candidates) on the CPU, one compile worker: every
    candidate is compiled in the worker while codegen runs; the first launch loads each from the disk
    cache and compiles none in this process."""
    from inductor_tile import config
    from inductor_tile.codegen import compile_workers, heuristics
    from inductor_tile.kernel_compiler.runtime import autotuner, disk_cache

    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path))  # nothing compiled or tuned yet
    monkeypatch.setattr(heuristics, "is_gpu", lambda device_type: True)
    monkeypatch.setattr(config, "compile_workers", 1)
    monkeypatch.setattr(config, "precompile", True)
    monkeypatch.setattr(config, "autotune", "reductions")
    monkeypatch.setattr(compile_workers, "_pool", None)  # a pool filling this test's cache directory
    monkeypatch.setattr(disk_cache, "stats", type(disk_cache.stats)())
    autotuner.stats.reset()

    def f(x, w):
        return torch.softmax(torch.nn.functional.layer_norm(x, (x.shape[-1],), w) * 2.0, -1) + 1.0

    gen = torch.Generator().manual_seed(5)
    x, w = torch.randn(64, 300, generator=gen), torch.randn(300, generator=gen)
    torch._dynamo.reset()
    try:
        out = torch.compile(f, backend="tile")(x, w)
    finally:
        pool = compile_workers._pool
        if pool is not None:
            pool.close()
    torch.testing.assert_close(out.double(), f(x.double(), w.double()), atol=1e-5, rtol=1e-5)
    assert autotuner.stats.tunings >= 1 and autotuner.stats.benchmarks >= 2  # candidates were timed
    assert disk_cache.stats.compiles == 0  # none compiled at the launch, in this process
    assert disk_cache.stats.hits == autotuner.stats.benchmarks  # each candidate loaded from the worker's compile


# --- IR texts a cache-filling compile leaves out ------------------------------------------------------------


def test_a_cache_filling_compile_stores_no_ir_text_and_the_loaded_kernel_makes_it_on_read(tmp_path, monkeypatch):
    """A compile worker's compile (load=False) prints neither TTIR nor TTGIR; the kernel later loaded from
    its cache entry answers both, identical to a plain compile's, and runs."""
    from inductor_tile.kernel_compiler import compiler
    from inductor_tile.kernel_compiler.runtime import disk_cache
    from inductor_tile.kernel_compiler.stage_texts import StageTexts

    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TILE_CACHE_DISABLE", raising=False)
    kernel = runtime.load_kernel("tile_poi_cold_scale", GENERATED_SOURCE)
    x = torch.randn(500)
    specs = kernel.specialize(kernel.bind((x, x, 500), {"BLOCK": 64}))
    printed = []
    monkeypatch.setattr(compiler, "_dump", lambda k: printed.append(k.ir_text))  # each pipeline run's choice
    assert compiler.compile_specialized(kernel, specs, target="cpu", num_warps=1, load=False) is not None
    assert printed == [False]
    key = disk_cache.kernel_key(kernel, specs, 1, "cpu", sanitize=False)
    entry = disk_cache.load(key)
    assert entry is not None and "ttir" not in entry.asm and "ttgir" not in entry.asm and "llir" in entry.asm

    loaded = compiler.compile_specialized(kernel, specs, target="cpu", num_warps=1)
    # the stored llir is read at the first read too (a launch needs the binary only)
    assert loaded.from_disk and isinstance(loaded.asm, StageTexts) and loaded.asm.deferred == ("ttir", "ttgir", "llir")
    out = torch.full((500,), float("nan"))
    loaded.launch_values(kernel, (x, out, 500, 64), (8, 1, 1))  # the binary works without the texts
    torch.testing.assert_close(out.double(), x.double() * 3.0 - 1.0)
    assert printed == [False]  # loading compiled nothing
    assert "ttir" in loaded.asm and printed == [False]  # asking does not compile either
    ttir = loaded.asm["ttir"]  # reading does, once, without a binary
    assert printed == [False, True] and loaded.asm.deferred == ()
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    fresh = compiler.compile_specialized(kernel, specs, target="cpu", num_warps=1)
    assert fresh.asm.deferred == ()  # a launchable compile prints its texts as it goes
    assert ttir == fresh.asm["ttir"] and loaded.asm["ttgir"] == fresh.asm["ttgir"]
    assert loaded.asm["llir"] == fresh.asm["llir"]
    assert dict(loaded.asm) == dict(fresh.asm) and set(loaded.asm) == set(fresh.asm)


def test_stage_texts_make_deferred_stages_once_on_any_read():
    import pickle
    import threading

    from inductor_tile.kernel_compiler.stage_texts import StageTexts

    calls = []
    started = threading.Event()

    def remake():
        calls.append(1)
        started.wait(5)  # a second reader arrives meanwhile
        return {"ttir": "module ttir", "ttgir": "module ttgir", "llir": "other llir"}

    texts = StageTexts({"llir": "llir text"}, remake=remake, deferred=("ttir", "ttgir"))
    assert texts.made() == {"llir": "llir text"} and calls == []
    assert "ttir" in texts and "ptx" not in texts and texts.get("ptx", "none") == "none" and calls == []
    with pytest.raises(KeyError):
        texts["ptx"]
    results = []
    readers = [threading.Thread(target=lambda: results.append(texts["ttgir"])) for _ in range(2)]
    for reader in readers:
        reader.start()
    started.set()
    for reader in readers:
        reader.join()
    assert results == ["module ttgir"] * 2 and calls == [1]
    assert dict(texts) == {"llir": "llir text", "ttir": "module ttir", "ttgir": "module ttgir"}  # its own llir kept
    assert pickle.loads(pickle.dumps(texts)) == dict(texts)
    eager = StageTexts({"ttir": "a", "ttgir": "b"}, remake=remake, deferred=("ttir", "ttgir"))
    assert eager.deferred == () and list(eager.items()) == [("ttir", "a"), ("ttgir", "b")] and calls == [1]


def test_a_compile_ahead_of_the_launch_leaves_its_ir_texts_to_the_first_read(monkeypatch):
    """JITFunction.precompile (the backend's compile threads) prints no IR; the launched kernel still gives it."""
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    x = torch.randn(300, generator=torch.Generator().manual_seed(3))
    out = torch.full((300,), float("nan"))
    user_scale.cache.clear()
    user_scale.launch_cache.clear()
    specs = user_scale.specialize(user_scale.bind((x, out, 300), {"BLOCK": 64}))
    user_scale.precompile(specs, "cpu").result()
    compiled = user_scale[(5,)](x, out, 300, BLOCK=64)
    torch.testing.assert_close(out.double(), x.double() * 3.0 - 1.0)
    assert compiled.asm.deferred == ("ttir", "ttgir")
    user_scale.cache.clear()
    user_scale.launch_cache.clear()
    direct = user_scale[(5,)](x, out, 300, BLOCK=64)  # a launch's own compile prints as it goes
    assert direct.asm.deferred == ()
    assert compiled.asm["ttgir"] == direct.asm["ttgir"] and compiled.asm["ttir"] == direct.asm["ttir"]


def test_a_compile_worker_imports_no_torch(tmp_path):
    """A worker's start-up (its compiler imports) and its compiles never import torch: 1.7 -> 0.6 CPU s and
    284 -> 98 MB per worker, eight of them at a GPU host's cold start."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    program = f"""
import sys
import inductor_tile.codegen.compile_worker as worker
worker.warm_up()
started = "torch" in sys.modules
from inductor_tile.kernel_compiler.runtime import disk_cache
specs = [("x_ptr", "*fp32", None, True, False), ("out_ptr", "*fp32", None, True, False), ("n", "i32", None, False, False),
         ("BLOCK", "constexpr", 128, False, False)]
for target in ("cpu", "cuda:90"):
    assert worker.compile_task("tile_poi_cold_scale", {GENERATED_SOURCE!r}, specs, target, 4, {{}},
                               disk_cache.compiler_fingerprint())
print("TORCH", started, "torch" in sys.modules)
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")])),
               TILE_CACHE_DIR=str(tmp_path))
    env.pop("TILE_CACHE_DISABLE", None)
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "TORCH False False" in done.stdout, done.stdout
    assert len(list(tmp_path.rglob("*.cubin"))) == 1  # it did compile (the CPU object beside it)
