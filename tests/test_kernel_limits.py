"""model_benchmarks.kernel_limits: the micro benchmarks' kernels, recorded as an H200 would get them and read from
their sm_90 code without a GPU (ptxas; cuobjdump where found, else the PTX); kernel_sass's reading of SASS."""

from __future__ import annotations

import pytest

from inductor_tile.kernel_compiler.runtime import cuda_tools
from model_benchmarks import kernel_limits, kernel_sass


def _needs_ptxas() -> None:
    try:
        cuda_tools.find_ptxas()
        cuda_tools.find_libdevice()
    except FileNotFoundError as e:
        pytest.skip(f"no ptxas/libdevice here: {e}")


def test_softmax_row_of_a_small_case_is_sane(monkeypatch):
    _needs_ptxas()
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    launches, nbytes = kernel_limits.capture("softmax", 256, 8192)
    assert len(launches) == 1  # one persistent kernel, shaped for a GPU (several warps a row)
    launch = launches[0]
    assert launch.num_warps in (4, 8, 16) and "for roffset" not in launch.fn.src
    assert launch.grid == (256, 1, 1) and nbytes == 2 * 256 * 8192 * 2
    row = kernel_limits.analyse(launch, kernel_limits.find_cuobjdump())
    assert 0 < row.registers <= 255 and row.spill_bytes == 0
    assert row.occupancy_limit in ("warp slots", "blocks", "registers", "shared")
    assert 1 <= row.blocks_per_sm <= 64 // row.warps and 0 < row.warps_per_sm(kernel_limits.DEVICE) <= 64
    assert row.instructions > 50 and 0.5 < row.per_byte < 50 and row.special_per_byte > 0  # exp on the MUFU
    assert row.widths.get(16, 0) > 0  # aligned fp16 rows load 16 bytes a thread
    assert row.thread_in_flight >= 16 and row.rounds >= 1 and row.pass_chain > 0
    assert row.moved == row.ideal == nbytes  # read once, written once
    assert all(0 < value <= 1 for value, _ in row.ceilings.values())
    assert 0 < row.model_share(kernel_limits.DEVICE) <= 1 and row.reason
    table = kernel_limits.table([row])
    assert table.count("\n") == 2 and "softmax 256x8192" in table


def test_cuda_shapes_puts_everything_back():
    from torch._inductor.fx_passes import post_grad
    from torch._inductor.runtime.hints import DeviceProperties

    from inductor_tile.codegen import heuristics
    from inductor_tile.scheduler import inplace

    def state():
        return (heuristics.is_gpu, inplace.devices, DeviceProperties.__dict__["create"],
                post_grad.prepare_softmax_extra_check.__code__)

    before = state()
    with kernel_limits.cuda_shapes():
        assert heuristics.is_gpu("cpu") and inplace.devices() == ()
        import torch

        assert DeviceProperties.create(torch.device("cpu")).multi_processor_count == 132
    assert before == state() and not heuristics.is_gpu("cpu")


SASS = """
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R20, SR_TID.X ;
        /*0020*/              @!P3 LDG.E.128 R4, desc[UR6][R8.64] ;
        /*0030*/                   LDG.E.U16 R12, desc[UR6][R10.64] ;
        /*0040*/                   IADD3 R17, R17, 0x800, RZ ;
        /*0050*/                   HADD2.F32 R21, -RZ, R6.H0_H0 ;
        /*0060*/                   MUFU.EX2 R22, R21 ;
        /*0070*/                   FADD R23, R22, R12 ;
        /*0080*/              @!P0 BRA 0x20 ;
        /*0090*/                   STG.E.64 desc[UR6][R2.64], R22 ;
        /*00a0*/                   EXIT ;
        /*00b0*/                   BRA 0xb0;
        /*00c0*/                   NOP;
"""


def test_sass_loops_widths_and_bytes_in_flight():
    program = kernel_sass.parse_sass(SASS)
    assert len(program.instructions) == 12  # the NOP left out
    assert program.loops() == [(2, 8)]  # the BRA to itself after EXIT is no loop
    loop = program.loop_indices()
    assert [a.access_bytes for a in program.accesses(loop)] == [16, 2]
    assert program.accesses()[-1].is_store and program.accesses()[-1].access_bytes == 8
    # both loads are issued before R6 (written by the 128-bit load into R4..R7) is read
    assert program.bytes_in_flight(2, 9) == 18
    assert program.load_rounds(loop) == 1
    assert sum(program.instructions[i].is_special_function for i in loop) == 1
    # HADD2 (4) -> MUFU (18) -> FADD (4): 26 clocks, the loads counted apart
    assert program.critical_path(loop) == 26


def test_ptx_is_read_where_there_is_no_cuobjdump():
    ptx = """
.visible .entry k(
)
{
$L__BB0_1:
	@%p1 ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd5];
	add.f32 %f1, %f2, %f3;
	ex2.approx.f32 %f4, %r1;
	@%p9 bra 	$L__BB0_1;
	st.global.b16 [%rd13], %rs1;
	ret;
}
"""
    program = kernel_sass.parse_ptx(ptx)
    assert program.source == "PTX" and program.loops() == [(0, 3)]
    assert [a.access_bytes for a in program.accesses()] == [16, 2]
    assert program.bytes_in_flight(0, 4) == 16 and program.load_rounds(range(4)) == 1
