"""The CUDA toolchain pieces the NVIDIA target needs on the host: ptxas and libdevice.

Nothing here needs a GPU or the CUDA driver; it finds the tools, asks ptxas its version,
and assembles PTX into a cubin (or only checks that it assembles).

Search order of `find_ptxas` / `find_libdevice`:

1. the environment variable `TILE_PTXAS_PATH` / `TILE_LIBDEVICE_PATH`;
2. the pip wheels `nvidia-cuda-nvcc` / `nvidia-nvvm` (`nvidia/cu13/...` for CUDA 13,
   `nvidia/cuda_nvcc/...` for CUDA 12), found without importing anything;
3. `$CUDA_HOME`, then `/usr/local/cuda`;
4. `PATH` (ptxas only);
5. the copy Triton ships inside its package, if Triton is installed (found, not imported).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import itertools
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

__all__ = ["PTXASError", "find_ptxas", "find_libdevice", "ptxas_version", "ptx_isa_version", "assemble_ptx",
           "check_ptx"]

_PTXAS_ENV = "TILE_PTXAS_PATH"
_LIBDEVICE_ENV = "TILE_LIBDEVICE_PATH"
_LIBDEVICE = "libdevice.10.bc"
_DEFAULT_CUDA_HOME = Path("/usr/local/cuda")

#: (CUDA major, minor) -> the newest PTX ISA that release's ptxas accepts (NVIDIA's PTX release
#: history table; there was no CUDA 12.7 toolkit, so 12.6 stays at 8.5).
_PTX_ISA = {
    (12, 0): "8.0", (12, 1): "8.1", (12, 2): "8.2", (12, 3): "8.3", (12, 4): "8.4", (12, 5): "8.5",
    (12, 6): "8.5", (12, 7): "8.6", (12, 8): "8.7", (12, 9): "8.8", (13, 0): "9.0", (13, 1): "9.1",
}


class PTXASError(RuntimeError):
    """ptxas rejected a kernel's PTX.

    Attributes: `kernel_name`, `arch`, `stderr` (ptxas's diagnostics), `ptx_path` (the PTX,
    kept on disk) and `command` (the command line that reproduces the failure).
    """

    def __init__(self, kernel_name: str, arch: str, stderr: str, ptx_path: str, command: list[str]):
        self.kernel_name = kernel_name
        self.arch = arch
        self.stderr = stderr
        self.ptx_path = ptx_path
        self.command = command
        super().__init__(f"ptxas failed on kernel '{kernel_name}' for {arch}:\n{stderr.rstrip()}\n"
                         f"The PTX is kept at {ptx_path}; repro command:\n  {shlex.join(command)}")


def _nvidia_wheel_dirs() -> list[Path]:
    """The directories of the `nvidia` namespace package (the CUDA pip wheels), if any."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def _triton_nvidia_dir() -> Path | None:
    """`triton/backends/nvidia` of an installed Triton, located without importing it."""
    try:
        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "backends" / "nvidia"


def _first_existing(candidates: list[Path]) -> str | None:
    for path in candidates:
        if path.is_file():
            return str(path)
    return None


def _from_env(variable: str, what: str) -> str | None:
    value = os.environ.get(variable)
    if not value:
        return None
    if not Path(value).is_file():
        raise FileNotFoundError(f"{variable}={value!r} does not name a file; point it at {what} or unset it")
    return value


def _not_found(what: str, looked: list[Path | str], fix: str) -> FileNotFoundError:
    places = "\n".join(f"  {place}" for place in looked)
    return FileNotFoundError(f"cannot find {what}; looked in:\n{places}\nFix: {fix}")


def find_ptxas() -> str:
    """The path of a `ptxas` executable (see the module docstring for the search order).

    Raises FileNotFoundError listing every place it looked when there is none.
    """
    found = _from_env(_PTXAS_ENV, "a ptxas executable")
    if found:
        return found
    candidates = [d / sub / "bin" / "ptxas" for d in _nvidia_wheel_dirs() for sub in ("cu13", "cuda_nvcc")]
    if cuda_home := os.environ.get("CUDA_HOME"):
        candidates.append(Path(cuda_home) / "bin" / "ptxas")
    candidates.append(_DEFAULT_CUDA_HOME / "bin" / "ptxas")
    found = _first_existing(candidates)
    if found:
        return found
    on_path = shutil.which("ptxas")
    if on_path:
        return on_path
    triton = _triton_nvidia_dir()
    bundled = [triton / "bin" / "ptxas"] if triton is not None else []
    found = _first_existing(bundled)
    if found:
        return found
    raise _not_found("ptxas", [f"${_PTXAS_ENV}", *candidates, "PATH", *bundled],
                     f"`pip install nvidia-cuda-nvcc` (or install the CUDA toolkit), "
                     f"or set {_PTXAS_ENV} to the ptxas executable")


def find_libdevice() -> str:
    """The path of `libdevice.10.bc` (see the module docstring for the search order).

    Raises FileNotFoundError listing every place it looked when there is none.
    """
    found = _from_env(_LIBDEVICE_ENV, _LIBDEVICE)
    if found:
        return found
    tail = Path("nvvm") / "libdevice" / _LIBDEVICE
    candidates = [d / sub / tail for d in _nvidia_wheel_dirs() for sub in ("cu13", "cuda_nvcc")]
    if cuda_home := os.environ.get("CUDA_HOME"):
        candidates.append(Path(cuda_home) / tail)
    candidates.append(_DEFAULT_CUDA_HOME / tail)
    triton = _triton_nvidia_dir()
    if triton is not None:
        candidates.append(triton / "lib" / _LIBDEVICE)
    found = _first_existing(candidates)
    if found:
        return found
    raise _not_found(_LIBDEVICE, [f"${_LIBDEVICE_ENV}", *candidates],
                     f"`pip install nvidia-nvvm` (or install the CUDA toolkit), "
                     f"or set {_LIBDEVICE_ENV} to the {_LIBDEVICE} file")


@functools.lru_cache(maxsize=None)
def _ptxas_version_of(ptxas: str) -> tuple[int, int]:
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"release (\d+)\.(\d+)", out) or re.search(r"V(\d+)\.(\d+)", out)
    if match is None:
        raise RuntimeError(f"cannot parse the version of {ptxas} from:\n{out}")
    return int(match.group(1)), int(match.group(2))


def ptxas_version(ptxas: str | None = None) -> tuple[int, int]:
    """(major, minor) of the CUDA release `ptxas` (default: `find_ptxas()`) belongs to, e.g. (13, 0)."""
    return _ptxas_version_of(ptxas or find_ptxas())


def ptx_isa_version(version: tuple[int, int]) -> str:
    """The newest PTX ISA (the `.version` directive, e.g. "9.0") that ptxas of CUDA `version` accepts.

    CUDA 11.x maps to 7.x; a release newer than the table's last maps to the newest known ISA.
    """
    version = (int(version[0]), int(version[1]))
    if version in _PTX_ISA:
        return _PTX_ISA[version]
    if version > max(_PTX_ISA):
        return _PTX_ISA[max(_PTX_ISA)]
    if version[0] == 11:
        return f"7.{min(version[1], 8)}"
    if version[0] == 12:  # a 12.x minor missing from the table: the newest ISA at or below it
        return _PTX_ISA[max(v for v in _PTX_ISA if v <= version)]
    raise ValueError(f"CUDA {version[0]}.{version[1]} is too old; the NVIDIA target needs CUDA 11 or newer")


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:100] or "kernel"


_scratch_lock = threading.Lock()
_scratch: dict[int, str] = {}  # process id -> this process's ptxas scratch directory
_scratch_names = itertools.count()


def _scratch_paths(name: str) -> tuple[str, str]:
    """Fresh (PTX, cubin) paths in a directory made once per process and removed at its exit: a temporary
    directory per kernel cost 1.5 ms of CPU to remove on this machine's ext4 (mounted with discard)."""
    with _scratch_lock:
        directory = _scratch.get(os.getpid())
        if directory is None or not os.path.isdir(directory):  # a forked child, or a cleaned /tmp
            directory = _scratch[os.getpid()] = tempfile.mkdtemp(prefix="tile-ptxas-")
            atexit.register(shutil.rmtree, directory, True)
        stem = os.path.join(directory, f"{name}-{next(_scratch_names)}")
    return stem + ".ptx", stem + ".cubin"


def assemble_ptx(ptx: str, arch: str, kernel_name: str, options: Sequence[str] = (),
                 log: list[str] | None = None) -> bytes:
    """Assemble `ptx` into a cubin for `arch` (e.g. "sm_90", "sm_90a") with ptxas and return it.

    `options` are extra ptxas flags (e.g. ["-lineinfo"]); `log`, if given, receives what ptxas
    printed (its `-v` report). On failure raises PTXASError, whose message carries ptxas's
    stderr, `kernel_name` and a repro command; the PTX stays on disk.
    """
    ptxas = find_ptxas()
    name = _safe_name(kernel_name)
    ptx_path, cubin_path = _scratch_paths(name)
    try:
        Path(ptx_path).write_text(ptx)
        command = [ptxas, f"-arch={arch}", *options, "-o", cubin_path, ptx_path]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode == 0:
            if log is not None:
                log.append(proc.stdout + proc.stderr)
            return Path(cubin_path).read_bytes()
    finally:
        for path in (ptx_path, cubin_path):
            with contextlib.suppress(OSError):
                os.unlink(path)
    # keep the PTX where the user can re-run ptxas on it
    fd, kept = tempfile.mkstemp(prefix=f"{name}-", suffix=".ptx")
    with os.fdopen(fd, "w") as f:
        f.write(ptx)
    repro = [ptxas, f"-arch={arch}", *options, "-o", kept[:-len(".ptx")] + ".cubin", kept]
    stderr = (proc.stderr or proc.stdout or f"(no output; exit status {proc.returncode})").replace(ptx_path, kept)
    raise PTXASError(kernel_name, arch, stderr, kept, repro)


def check_ptx(ptx: str, arch: str, kernel_name: str = "kernel") -> None:
    """Check that `ptx` assembles for `arch`; raises PTXASError like `assemble_ptx` if not."""
    assemble_ptx(ptx, arch, kernel_name)
