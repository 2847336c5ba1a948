"""`python -m inductor_tile.tools.ptx_stats`: a kernel's registers, instructions and shared-memory traffic
on NVIDIA read from its PTX without a GPU (ptxas -v)."""

from __future__ import annotations

import platform

import pytest

from inductor_tile.tools import ptx_stats

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                reason="ptxas wheels exist for Linux x86-64 only")

KERNELS = '''
import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=i < n) * 2.0, mask=i < n)


@inductor_tile.jit
def row_sums(x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, COLS)[None, :]
    tl.store(out_ptr + tl.arange(0, ROWS), tl.sum(tl.load(x_ptr + c + COLS * r), 1))
'''


def test_stats_of_a_copy_and_of_a_reduction(tmp_path, capsys):
    path = tmp_path / "kernels.py"
    path.write_text(KERNELS)
    copy = ptx_stats.ptx_stats(ptx_stats.tile_ptx(path, "scale", {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                                                  {"BLOCK": 1024}, 4, 90), "sm_90")
    sums = ptx_stats.ptx_stats(ptx_stats.tile_ptx(path, "row_sums", {"x_ptr": "*fp32", "out_ptr": "*fp32"},
                                                  {"ROWS": 64, "COLS": 256}, 4, 90), "sm_90")
    assert 0 < copy["registers"] <= 255 and copy["spill bytes"] == 0
    assert copy["shared accesses"] == copy["barriers"] == 0  # a copy never leaves its registers
    assert sums["shared accesses"] > 0 and sums["barriers"] > 0  # row sums across warps meet in shared memory
    assert sums["instructions"] > copy["instructions"] > 10
    # the command line prints one column per compiler
    assert ptx_stats.main([str(path), "--kernel", "scale", "--signature", "x_ptr=*fp32,out_ptr=*fp32,n=i32",
                           "--constexprs", "BLOCK=1024"]) == 0
    table = capsys.readouterr().out
    assert "tile" in table and "registers" in table and "shared accesses" in table


def test_several_kernels_need_a_name(tmp_path):
    path = tmp_path / "kernels.py"
    path.write_text(KERNELS)
    with pytest.raises(SystemExit, match="--kernel"):
        ptx_stats.main([str(path), "--signature", "x_ptr=*fp32,out_ptr=*fp32,n=i32", "--constexprs", "BLOCK=8"])


DOT_KERNEL = '''
import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def matmul(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)[:, None]
    n = tl.arange(0, N)[None, :]
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n)
    tl.store(c_ptr + m * N + n, tl.dot(a, b))
'''


def test_the_ptx_target_is_what_gets_assembled(tmp_path, capsys):
    """A wgmma kernel's PTX targets sm_90a and does not assemble for plain sm_90: `--arch 90` must
    assemble each column's PTX for its own `.target`."""
    assert ptx_stats.ptx_target("\t.version 8.4\n.target sm_90a\n.address_size 64\n", "sm_90") == "sm_90a"
    assert ptx_stats.ptx_target(".version 8.4\n.address_size 64\n", "sm_80") == "sm_80"
    path = tmp_path / "dot.py"
    path.write_text(DOT_KERNEL)
    ptx = ptx_stats.tile_ptx(path, None, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"},
                             {"M": 64, "N": 64, "K": 64}, 4, 90)
    assert "wgmma" in ptx and ptx_stats.ptx_target(ptx, "sm_90") == "sm_90a"
    assert ptx_stats.main([str(path), "--signature", "a_ptr=*fp16,b_ptr=*fp16,c_ptr=*fp32",
                           "--constexprs", "M=64,N=64,K=64", "--arch", "90"]) == 0
    assert "registers" in capsys.readouterr().out


def test_sass_listing_counts_instructions_but_not_nops():
    listing = """
        Function : kernel
        /*0000*/                   LDC R1, c[0x0][0x28] ;                       /* 0x00000a00ff017b82 */
                                                                                  /* 0x000fe20000000800 */
        /*0010*/              @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;             /* 0x0000000402048981 */
        /*0020*/                   EXIT ;                                        /* 0x000000000000794d */
        /*0030*/                   BRA 0x30;                                     /* 0xfffffffc00fc7947 */
        /*0040*/                   NOP;                                          /* 0x0000000000007918 */
        /*0050*/                   NOP;                                          /* 0x0000000000007918 */
"""
    assert ptx_stats.count_sass(listing) == 4


@pytest.mark.skipif(ptx_stats.find_cuobjdump() is None, reason="no cuobjdump (CUDA toolkit or Triton's wheel)")
def test_sass_instructions_of_a_copy(tmp_path):
    path = tmp_path / "kernels.py"
    path.write_text(KERNELS)
    ptx = ptx_stats.tile_ptx(path, "scale", {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024}, 4, 90)
    stats = ptx_stats.ptx_stats(ptx, "sm_90")
    assert 5 < stats["SASS instructions"] < 3 * stats["instructions"], stats
