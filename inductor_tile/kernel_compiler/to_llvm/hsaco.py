"""LLVM IR -> AMDGCN assembly and a HIP code object (HSACO) for AMD GPUs.

The kernel's LDS buffer is given its size first (the lowering only knows it at the end),
so the code object's group segment size is exactly what the kernel uses. LLVM's AMDGPU
backend (inside llvmlite) emits a relocatable ELF object; `ld.lld -shared` links it into
the shared object HIP's `hipModuleLoadData` accepts. The linker is looked up in order:
`$TILE_LLD`, `$ROCM_PATH/llvm/bin` (default /opt/rocm), a ROCm Triton install's bundled
lld (never imported), then `ld.lld` / `ld.lld-NN` on PATH. Nothing here is needed to import
the package; a missing linker is reported when a code object is asked for.

`code_object_metadata` reads the AMDGPU metadata note (msgpack) of a code object, so tests
and the launcher can check what the backend recorded (kernarg size, wavefront size, LDS...).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import struct
import subprocess
import tempfile
from typing import Any

import llvmlite.binding as llvm

from . import llvm_tools

TRIPLE = "amdgcn-amd-amdhsa"
_LLD_VERSIONS = range(30, 15, -1)  # ld.lld-30 ... ld.lld-16 (Debian/Ubuntu name them so; 16 knows gfx942)


class ToolNotFoundError(RuntimeError):
    """An LLVM tool the AMD target needs (ld.lld to link, llvm-objdump to disassemble) is missing."""


def amdgpu_machine(arch: str) -> llvm.TargetMachine:
    """A new target machine for `arch` (gfx90a, gfx942, gfx1100...): one per compile, as kernels
    compile in several threads at once."""
    llvm_tools.initialize_all()
    target = llvm.Target.from_triple(TRIPLE)
    return target.create_target_machine(cpu=arch, opt=3, reloc="pic")


@functools.lru_cache(maxsize=None)
def data_layout(arch: str) -> str:
    return str(amdgpu_machine(arch).target_data)


def size_shared_memory(llvm_ir: str, symbol: str, num_bytes: int) -> str:
    """Turn the lowering's unsized LDS declaration into a definition of `num_bytes` (static LDS, so the
    code object records the size and a launch needs no dynamic shared memory)."""
    pattern = re.compile(rf'^@"?{re.escape(symbol)}"? = external addrspace\(3\) global \[0 x i8\](.*)$', re.M)
    return pattern.sub(lambda m: f'@"{symbol}" = internal addrspace(3) global [{max(num_bytes, 1)} x i8] undef'
                                 f'{m.group(1)}', llvm_ir, count=1)


def compile_to_amdgcn(llvm_ir: str, arch: str) -> tuple[str, str, bytes]:
    """(optimized LLVM IR, AMDGCN assembly, relocatable ELF object)."""
    machine = amdgpu_machine(arch)
    module = llvm_tools.parse(llvm_ir)
    module.triple = TRIPLE
    module.data_layout = str(machine.target_data)
    llvm_tools.optimize(module, machine)
    optimized = str(module)
    # code generation rewrites the module (control-flow annotation), so each emission gets its own copy
    assembly = machine.emit_assembly(module)
    copy = llvm_tools.parse(optimized)
    return optimized, assembly, machine.emit_object(copy)


def link(relocatable: bytes, name: str = "kernel") -> bytes:
    """The HSACO (shared ELF) of a relocatable AMDGPU object, linked with ld.lld."""
    lld = find_linker()
    with tempfile.TemporaryDirectory(prefix="tile-hsaco-") as tmp:
        source, output = os.path.join(tmp, f"{name}.o"), os.path.join(tmp, f"{name}.hsaco")
        with open(source, "wb") as f:
            f.write(relocatable)
        done = subprocess.run([lld, "-shared", "--no-undefined", source, "-o", output], capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{lld} could not link the code object of kernel '{name}':\n{done.stderr.strip()}")
        with open(output, "rb") as f:
            return f.read()


# --- finding tools -------------------------------------------------------------------------
def _candidates(tool: str, env: str) -> list[str]:
    paths = []
    if os.environ.get(env):
        paths.append(os.environ[env])
    rocm = os.environ.get("ROCM_PATH") or os.environ.get("ROCM_HOME") or "/opt/rocm"
    paths.append(os.path.join(rocm, "llvm", "bin", tool))
    spec = importlib.util.find_spec("triton") if tool == "ld.lld" else None
    if spec is not None and spec.submodule_search_locations:
        for root in spec.submodule_search_locations:
            paths.append(os.path.join(root, "backends", "amd", "llvm", "bin", tool))
    for name in [f"{tool}-{v}" for v in _LLD_VERSIONS] + [tool]:  # a versioned tool knows its LLVM's GPUs
        found = shutil.which(name)
        if found:
            paths.append(found)
    return paths


def _find(tool: str, env: str) -> str:
    for path in _candidates(tool, env):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    explicit = f"${env}={os.environ[env]!r} is not an executable; " if os.environ.get(env) else ""
    raise ToolNotFoundError(
        f"the AMD (hip) target needs {tool} from LLVM and none was found: {explicit}set ${env} to its path, "
        f"install ROCm ($ROCM_PATH/llvm/bin/{tool}), or install LLVM's tools (Debian/Ubuntu: "
        f"`apt-get install {'lld' if tool == 'ld.lld' else 'llvm'}-16`, which provides {tool}-16)")


def find_linker() -> str:
    """Path of ld.lld (see the module docstring for the search order); ToolNotFoundError if none."""
    return _find("ld.lld", "TILE_LLD")


def find_objdump() -> str:
    """Path of llvm-objdump (for disassembly in tests and by hand)."""
    return _find("llvm-objdump", "TILE_LLVM_OBJDUMP")


def has_linker() -> bool:
    try:
        find_linker()
    except ToolNotFoundError:
        return False
    return True


def disassemble(code_object: bytes, arch: str) -> str:
    """`llvm-objdump -d` of a code object (or relocatable object). An objdump older than `arch`
    (LLVM 16 predates gfx942) decodes it as the oldest chip of the same instruction set."""
    objdump = find_objdump()
    with tempfile.NamedTemporaryFile(suffix=".hsaco") as f:
        f.write(code_object)
        f.flush()
        for cpu in (arch, _SAME_ISA.get(arch)):
            done = subprocess.run([objdump, "-d", f"--triple={TRIPLE}", f"--mcpu={cpu}", f.name],
                                  capture_output=True, text=True)
            if "not a recognized processor" not in done.stderr:
                break
    if done.returncode or "not a recognized processor" in done.stderr:
        raise RuntimeError(f"{objdump} could not disassemble the {arch} code object: {done.stderr.strip()[:500]}")
    return done.stdout


_SAME_ISA = {"gfx942": "gfx940", "gfx941": "gfx940", "gfx950": "gfx940", "gfx1101": "gfx1100", "gfx1102": "gfx1100"}


# --- the code object's metadata note -----------------------------------------------------
_NT_AMDGPU_METADATA = 32


def code_object_metadata(elf: bytes) -> dict[str, Any]:
    """The AMDGPU metadata (msgpack note `NT_AMDGPU_METADATA` of owner "AMDGPU") as a dict."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        raise ValueError("not a 64-bit ELF code object")
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    entsize, count = struct.unpack_from("<HH", elf, 0x3A)
    for i in range(count):
        _, kind, _, _, offset, size = struct.unpack_from("<IIQQQQ", elf, shoff + i * entsize)
        if kind != 7:  # SHT_NOTE
            continue
        position, end = offset, offset + size
        while position < end:
            name_size, desc_size, note_type = struct.unpack_from("<III", elf, position)
            position += 12
            name = elf[position:position + name_size].rstrip(b"\0")
            position += (name_size + 3) & ~3
            desc = elf[position:position + desc_size]
            position += (desc_size + 3) & ~3
            if name == b"AMDGPU" and note_type == _NT_AMDGPU_METADATA:
                value, _ = _unpack(desc, 0)
                return value
    raise ValueError("the code object has no AMDGPU metadata note")


def kernel_metadata(elf: bytes, kernel: str) -> dict[str, Any]:
    """The metadata of one kernel (`.name` == kernel) of a code object."""
    for entry in code_object_metadata(elf).get("amdhsa.kernels", []):
        if entry.get(".name") == kernel:
            return entry
    raise KeyError(f"kernel '{kernel}' is not in the code object")


def _unpack(data: bytes, i: int) -> tuple[Any, int]:
    """One msgpack value at data[i:] -> (value, next index). The subset the AMDGPU note uses."""
    tag = data[i]
    i += 1
    if tag <= 0x7F:
        return tag, i
    if tag >= 0xE0:
        return tag - 0x100, i
    if 0xA0 <= tag <= 0xBF:
        n = tag & 0x1F
        return data[i:i + n].decode(), i + n
    if 0x90 <= tag <= 0x9F:
        return _unpack_array(data, i, tag & 0x0F)
    if 0x80 <= tag <= 0x8F:
        return _unpack_map(data, i, tag & 0x0F)
    fixed = {0xC2: False, 0xC3: True, 0xC0: None}
    if tag in fixed:
        return fixed[tag], i
    numbers = {0xCC: "B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: "b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
               0xCA: ">f", 0xCB: ">d"}
    if tag in numbers:
        fmt = numbers[tag]
        return struct.unpack_from(fmt, data, i)[0], i + struct.calcsize(fmt)
    lengths = {0xD9: ("B", "str"), 0xDA: (">H", "str"), 0xDB: (">I", "str"), 0xC4: ("B", "bin"),
               0xC5: (">H", "bin"), 0xC6: (">I", "bin"), 0xDC: (">H", "array"), 0xDD: (">I", "array"),
               0xDE: (">H", "map"), 0xDF: (">I", "map")}
    if tag in lengths:
        fmt, kind = lengths[tag]
        (n,) = struct.unpack_from(fmt, data, i)
        i += struct.calcsize(fmt)
        if kind == "str":
            return data[i:i + n].decode(), i + n
        if kind == "bin":
            return bytes(data[i:i + n]), i + n
        return (_unpack_array if kind == "array" else _unpack_map)(data, i, n)
    raise ValueError(f"unsupported msgpack tag {tag:#x} in the AMDGPU metadata")


def _unpack_array(data: bytes, i: int, n: int) -> tuple[list, int]:
    out = []
    for _ in range(n):
        value, i = _unpack(data, i)
        out.append(value)
    return out, i


def _unpack_map(data: bytes, i: int, n: int) -> tuple[dict, int]:
    out = {}
    for _ in range(n):
        key, i = _unpack(data, i)
        value, i = _unpack(data, i)
        out[key] = value
    return out, i
