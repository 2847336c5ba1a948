"""tl.load/tl.store cache hints (cache_modifier, eviction_policy, volatile): checked in the frontend with
errors at the user's line, carried on tt.load/tt.store, ignored on the interpreter, the CPU and AMD
(same values), and on NVIDIA the qualifiers of each ld.global/st.global (ptxas accepts them at sm_80 and
sm_90)."""

from __future__ import annotations

import re

import pytest

import inductor_tile
import inductor_tile.language as tl
from access_hint_cases import HINTS, hinted_axpy, hinted_axpy_kernel
from inductor_tile import CompilationError
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx
from suite import assert_checks
from test_nvidia_ptx import filecheck

SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}


@pytest.mark.parametrize("hints", HINTS, ids=str)
def test_hinted_kernel_interpreted(hints, interpret, gen):
    assert_checks(hinted_axpy(gen, "cpu", hints))


@pytest.mark.parametrize("hints", HINTS[1:3] + HINTS[-1:], ids=str)
def test_hinted_kernel_compiled_for_the_cpu(hints, compiled, gen):
    assert_checks(hinted_axpy(gen, "cpu", hints))


def _compile(hints: tuple, target: str):
    names = ("LOAD_CACHE", "LOAD_EVICT", "VOLATILE", "STORE_CACHE", "STORE_EVICT")
    constexprs = {"BLOCK": 512, **dict(zip(names, hints))}
    specs = [spec_from_signature(name, SIGNATURE[name], divisible_by_16=True) if name in SIGNATURE
             else spec_from_signature(name, "constexpr", constexprs[name]) for name in hinted_axpy_kernel.arg_names]
    return compile_specialized(hinted_axpy_kernel, specs, target=target, num_warps=4, native=False)


def test_hints_are_attributes_of_tt_load_and_tt_store(tmp_path):
    ttir = _compile((".cg", "evict_first", False, ".cs", "evict_last"), "cpu").asm["ttir"]
    filecheck(ttir, "CHECK: tt.load {{.*}} cacheModifier = cg evictionPolicy = evict_first :\n"
                    "CHECK: tt.store {{.*}} cacheModifier = cs evictionPolicy = evict_last :\n", tmp_path)
    ttir = _compile(("", "", True, "", ""), "cpu").asm["ttir"]
    filecheck(ttir, "CHECK: tt.load {{.*}} {isVolatile = true} :\n"
                    "CHECK-NOT: cacheModifier\n", tmp_path)
    assert "cacheModifier" not in _compile(("", "", False, "", ""), "cpu").asm["ttir"]


# (hints, what every global load / store of the kernel must look like)
PTX_CASES = [
    ((".cg", "", False, ".cs", ""), "ld.global.cg.", "st.global.cs."),
    ((".cv", "", False, ".wt", ""), "ld.global.cv.", "st.global.wt."),
    ((".ca", "", False, ".wb", ""), "ld.global.ca.", "st.global.wb."),
    (("", "evict_last", False, "", "evict_first"), "ld.global.L1::evict_last.L2::cache_hint.",
     "st.global.L1::evict_first.L2::cache_hint."),
    # ptxas: "Modifier '.evict_first' cannot be combined with modifier '.cg'": the cache operator wins
    ((".cg", "evict_first", False, ".cs", "evict_last"), "ld.global.cg.L2::cache_hint.", "st.global.cs.L2::cache_hint."),
    # `.volatile` combines with neither
    ((".cg", "evict_first", True, "", ""), "ld.volatile.global.", "st.global."),
]


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("hints, load, store", PTX_CASES, ids=[str(c[0]) for c in PTX_CASES])
def test_hints_become_ptx_qualifiers(hints, load, store, arch, tmp_path):
    ptx = _compile(hints, f"cuda:{arch}").asm["ptx"]
    check_ptx(ptx, f"sm_{arch}", "hinted_axpy")
    lines = [line.strip() for line in ptx.splitlines()]
    loads = [line for line in lines if "ld.global" in line or "ld.volatile.global" in line]
    stores = [line for line in lines if "st.global" in line]
    # 4 loads (masked and unmasked, v4 and gathered, scalar) and 2 stores, each with the qualifiers
    assert len(loads) >= 4 and len(stores) >= 2, ptx
    assert all(load in line for line in loads), "\n".join(loads)
    assert all(store in line for line in stores), "\n".join(stores)
    assert any(".v4.b32" in line for line in loads), "\n".join(loads)
    if "cache_hint" in load + store:
        policies = [line for line in lines if line.startswith("createpolicy.fractional.L2::")]
        assert 1 <= len(policies) <= 2, "\n".join(policies)  # one per eviction priority, shared by the accesses
        # the policy register is the last operand of every access that names it
        assert all(re.search(r", %rd\d+;$", line) for line in loads + stores if "cache_hint" in line)
    else:
        assert "createpolicy" not in ptx and "L1::" not in ptx and "cache_hint" not in ptx
    assert "bra" not in ptx, ptx


def test_plain_accesses_stay_plain_llvm_loads(tmp_path):
    ptx = _compile(("", "", False, "", ""), "cuda:90").asm["ptx"]
    filecheck(ptx, "CHECK-NOT: createpolicy\n"
                   "CHECK: ld.global.v4.b32\n"
                   "CHECK-NOT: ld.global.{{ca|cg|cs|cv|L1}}\n", tmp_path)


def test_hints_are_ignored_on_amd():
    # AMD has glc/slc/nt bits; not mapped yet: the kernel compiles as without hints
    hinted = _compile((".cg", "evict_first", True, ".cs", "evict_last"), "hip:gfx942").asm["llir"]
    plain = _compile(("", "", False, "", ""), "hip:gfx942").asm["llir"]
    assert hinted.count("load ") == plain.count("load ") and hinted.count("store ") == plain.count("store ")


# ===--------------------------------------------------------------------------===
# errors
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def bad_load_cache_kernel(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr, cache_modifier=".wb") + 1)


@inductor_tile.jit
def bad_store_cache_kernel(x_ptr):
    tl.store(x_ptr, 1.0, cache_modifier=".ca")


@inductor_tile.jit
def bad_eviction_kernel(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr, eviction_policy="evict_sometimes") + 1)


@inductor_tile.jit
def undotted_cache_kernel(x_ptr):
    tl.store(x_ptr, 1.0, cache_modifier="cs")


@inductor_tile.jit
def runtime_volatile_kernel(x_ptr, flag):
    tl.store(x_ptr, tl.load(x_ptr, volatile=flag) + 1)


@pytest.mark.parametrize("kernel, line, message", [
    (bad_load_cache_kernel, 'tl.load(x_ptr, cache_modifier=".wb")',
     "tl.load: cache_modifier '.wb' is not supported; use '' or one of '.ca', '.cg', '.cs', '.cv'"),
    (bad_store_cache_kernel, 'tl.store(x_ptr, 1.0, cache_modifier=".ca")',
     "tl.store: cache_modifier '.ca' is not supported; use '' or one of '.wb', '.cg', '.cs', '.wt'"),
    (bad_eviction_kernel, 'eviction_policy="evict_sometimes"',
     "tl.load: eviction_policy 'evict_sometimes' is not supported; use '' or one of 'evict_first', 'evict_last'"),
    (undotted_cache_kernel, 'cache_modifier="cs"', "tl.store: cache_modifier 'cs' is not supported"),
    (runtime_volatile_kernel, "volatile=flag", "tl.load: volatile must be a constant True or False"),
])
def test_bad_hints_point_at_the_source_line(kernel, line, message):
    signature = {"x_ptr": "*fp32", "flag": "i32"}
    with pytest.raises(CompilationError) as info:
        inductor_tile.compile(kernel, signature={name: signature[name] for name in kernel.arg_names}, constexprs={})
    assert line in info.value.source_line
    assert message in str(info.value)


def test_bad_hints_are_errors_in_the_interpreter_too(interpret):
    import torch

    with pytest.raises(ValueError, match="cache_modifier '.wb' is not supported"):
        bad_load_cache_kernel[(1,)](torch.zeros(1))
