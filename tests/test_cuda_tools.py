"""The host-side CUDA tools: finding ptxas/libdevice and assembling PTX (no GPU needed)."""

import importlib.machinery
import os
import stat
import subprocess
from pathlib import Path

import pytest

from inductor_tile.kernel_compiler.runtime import cuda_tools
from inductor_tile.kernel_compiler.runtime.cuda_tools import (PTXASError, assemble_ptx, check_ptx, find_libdevice,
                                                              find_ptxas, ptx_isa_version, ptxas_version)

STORE_ONE = """\
.version 8.0
.target sm_80
.address_size 64

.visible .entry store_one(
    .param .u64 out_ptr
)
{
    .reg .b64 %rd<3>;
    .reg .f32 %f<2>;

    ld.param.u64 %rd1, [out_ptr];
    cvta.to.global.u64 %rd2, %rd1;
    mov.f32 %f1, 0f3F800000;
    st.global.f32 [%rd2], %f1;
    ret;
}
"""

BROKEN = STORE_ONE.replace("st.global.f32 [%rd2], %f1;", "st.global.f32 [%rd2], %f_undeclared;")


@pytest.fixture(scope="module")
def ptxas() -> str:
    try:
        return find_ptxas()
    except FileNotFoundError as e:
        pytest.skip(f"no ptxas on this machine (pip install nvidia-cuda-nvcc or set TILE_PTXAS_PATH): {e}")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_assemble_valid_ptx(ptxas, arch):
    cubin = assemble_ptx(STORE_ONE, arch, "store_one")
    assert cubin[:4] == b"\x7fELF"
    assert check_ptx(STORE_ONE, arch) is None


def test_assemble_with_newest_isa(ptxas):
    isa = ptx_isa_version(ptxas_version())
    assert assemble_ptx(STORE_ONE.replace(".version 8.0", f".version {isa}"), "sm_90", "store_one")[:4] == b"\x7fELF"


def test_invalid_ptx_raises_with_repro(ptxas):
    with pytest.raises(PTXASError) as info:
        assemble_ptx(BROKEN, "sm_90", "store_one")
    error = info.value
    message = str(error)
    assert "store_one" in message and "sm_90" in message
    assert "f_undeclared" in message  # ptxas's own diagnostics
    assert "repro command" in message and ptxas in message and error.ptx_path in message
    try:
        assert Path(error.ptx_path).read_text() == BROKEN
        rerun = subprocess.run(error.command, capture_output=True, text=True)
        assert rerun.returncode != 0 and "f_undeclared" in rerun.stderr
        with pytest.raises(PTXASError) as again:
            check_ptx(BROKEN, "sm_80", "store_one")
        os.unlink(again.value.ptx_path)
    finally:
        os.unlink(error.ptx_path)


def test_assembling_leaves_no_files_and_survives_a_cleaned_scratch_directory(ptxas):
    """ptxas's files go to one scratch directory per process (not a temporary directory per kernel) and are
    removed after each call, a failing one included; a scratch directory removed meanwhile is made again."""
    first = assemble_ptx(STORE_ONE, "sm_90", "store_one")
    scratch = Path(cuda_tools._scratch[os.getpid()])
    assert scratch.is_dir() and not list(scratch.iterdir())
    with pytest.raises(PTXASError) as info:
        assemble_ptx(BROKEN, "sm_90", "store_one")
    os.unlink(info.value.ptx_path)  # the kept copy is elsewhere
    assert not list(scratch.iterdir())
    scratch.rmdir()  # as a /tmp cleaner would
    assert assemble_ptx(STORE_ONE, "sm_90", "store_one") == first
    assert Path(cuda_tools._scratch[os.getpid()]).is_dir()


def test_ptxas_version_is_parsed(ptxas):
    major, minor = ptxas_version()
    assert major >= 11 and minor >= 0


@pytest.mark.parametrize("version, isa", [((12, 0), "8.0"), ((12, 1), "8.1"), ((12, 4), "8.4"), ((12, 5), "8.5"),
                                          ((12, 6), "8.5"), ((12, 8), "8.7"), ((12, 9), "8.8"), ((13, 0), "9.0"),
                                          ((11, 8), "7.8")])
def test_ptx_isa_table(version, isa):
    assert ptx_isa_version(version) == isa


def test_ptx_isa_of_unknown_versions():
    newest = ptx_isa_version((13, 0))
    assert float(ptx_isa_version((14, 3))) >= float(newest)
    assert ptx_isa_version((99, 0)) == ptx_isa_version((14, 3))
    with pytest.raises(ValueError):
        ptx_isa_version((10, 2))


# -- the search -----------------------------------------------------------------------------

def _touch(path: Path, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def nowhere(monkeypatch, tmp_path):
    """Hide every real toolkit: no env variables, no wheels, empty CUDA_HOME, PATH and default home."""
    monkeypatch.delenv("TILE_PTXAS_PATH", raising=False)
    monkeypatch.delenv("TILE_LIBDEVICE_PATH", raising=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("CUDA_HOME", str(empty))
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(cuda_tools, "_DEFAULT_CUDA_HOME", empty / "usr-local-cuda")
    monkeypatch.setattr(cuda_tools.importlib.util, "find_spec", lambda name, *a: None)
    return tmp_path


def _fake_nvidia_package(monkeypatch, root: Path) -> None:
    spec = importlib.machinery.ModuleSpec("nvidia", None, is_package=True)
    spec.submodule_search_locations = [str(root / "nvidia")]
    monkeypatch.setattr(cuda_tools.importlib.util, "find_spec", lambda name, *a: spec if name == "nvidia" else None)


def test_nothing_found_raises(nowhere):
    with pytest.raises(FileNotFoundError) as info:
        find_ptxas()
    message = str(info.value)
    assert "pip install nvidia-cuda-nvcc" in message and "TILE_PTXAS_PATH" in message
    assert str(nowhere / "empty" / "bin" / "ptxas") in message and "PATH" in message
    with pytest.raises(FileNotFoundError) as info:
        find_libdevice()
    assert "pip install nvidia-nvvm" in str(info.value) and "TILE_LIBDEVICE_PATH" in str(info.value)


def test_env_variables_win(nowhere, monkeypatch):
    ptxas = _touch(nowhere / "custom" / "my-ptxas", executable=True)
    libdevice = _touch(nowhere / "custom" / "libdevice.10.bc")
    monkeypatch.setenv("TILE_PTXAS_PATH", str(ptxas))
    monkeypatch.setenv("TILE_LIBDEVICE_PATH", str(libdevice))
    assert find_ptxas() == str(ptxas)
    assert find_libdevice() == str(libdevice)
    monkeypatch.setenv("TILE_PTXAS_PATH", str(nowhere / "missing"))
    with pytest.raises(FileNotFoundError, match="TILE_PTXAS_PATH"):
        find_ptxas()


@pytest.mark.parametrize("sub", ["cu13", "cuda_nvcc"])
def test_pip_wheels_are_found(nowhere, monkeypatch, sub):
    site = nowhere / "site"
    ptxas = _touch(site / "nvidia" / sub / "bin" / "ptxas", executable=True)
    libdevice = _touch(site / "nvidia" / sub / "nvvm" / "libdevice" / "libdevice.10.bc")
    _fake_nvidia_package(monkeypatch, site)
    assert find_ptxas() == str(ptxas)
    assert find_libdevice() == str(libdevice)


def test_cuda_home_then_path(nowhere, monkeypatch):
    home = nowhere / "cuda-home"
    ptxas = _touch(home / "bin" / "ptxas", executable=True)
    libdevice = _touch(home / "nvvm" / "libdevice" / "libdevice.10.bc")
    monkeypatch.setenv("CUDA_HOME", str(home))
    assert find_ptxas() == str(ptxas)
    assert find_libdevice() == str(libdevice)
    monkeypatch.setenv("CUDA_HOME", str(nowhere / "empty"))
    on_path = _touch(nowhere / "bin-dir" / "ptxas", executable=True)
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert find_ptxas() == str(on_path)
