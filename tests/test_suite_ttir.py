"""The kernel suite through the compiler front end: TTIR is built, optimized and parses back.

Launching without TILE_INTERPRET compiles each specialization to TTIR before running it,
so these tests also check that compilation does not change results.
"""

import pytest

import suite
from inductor_tile.kernel_compiler.ir.context import parse_ttir, print_ir
from suite import CASES, assert_checks


def _suite_kernels():
    return [v for v in vars(suite).values() if type(v).__name__ == "JITFunction"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_suite_case_compiled(name, compiled, gen):
    assert_checks(CASES[name](gen))


def test_every_suite_kernel_ttir_parses_back(compiled, gen):
    for case in CASES.values():
        case(gen)
    seen = 0
    for kernel in _suite_kernels():
        for compiled_kernel in kernel.cache.values():
            text = compiled_kernel.asm["ttir"]
            module = parse_ttir(text)
            module.verify()
            assert print_ir(module) == text, f"{kernel.__name__}: TTIR does not round-trip"
            seen += 1
    kernels_with_ir = {k.__name__ for k in _suite_kernels() if k.cache}
    helpers = {"gelu_tanh", "bias_act"}  # inlined into bias_act_kernel, never launched on their own
    assert kernels_with_ir == {k.__name__ for k in _suite_kernels()} - helpers
    assert seen >= 12
