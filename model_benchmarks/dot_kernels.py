"""Kernels built on `tl.dot`, written in the tile language (Triton-compatible: swapping the two
imports gives the same kernels under Triton, as `gpu_kernels.py` does for the benchmark).

- `matmul_kernel`: C = A @ B for any sizes and strides, one BLOCK_M x BLOCK_N tile of C per
  program, stepping through K in BLOCK_K slices;
- `matmul_pointers_kernel`: the same in the Triton tutorial's form (pointer tiles advanced
  around the loop);
- `attention_fwd_kernel`: causal attention forward for one BLOCK_M block of queries of one
  (batch, head) per program, with an online softmax (the running maximum and sum are
  rescaled as each block of keys arrives, so the scores never leave registers).
"""

import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Tile order: programs sweep C in horizontal bands of GROUP_M tile rows, going down each
    # column of tiles within a band before moving right, so programs running at the same time
    # share rows of A and columns of B in the L2 cache.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    programs_per_band = GROUP_M * tiles_n
    band = pid // programs_per_band
    first_tile_m = band * GROUP_M
    band_height = tl.minimum(tiles_m - first_tile_m, GROUP_M)
    within = pid % programs_per_band
    tile_m = first_tile_m + within % band_height
    tile_n = within // band_height

    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k_start in range(0, K, BLOCK_K):
        # addresses from the loop index (not pointer tiles carried around the loop), so that the
        # compiler can rebuild them in the layout of the widest loads
        k = k_start + ks
        a = tl.load(a_ptr + rows[:, None] * stride_am + k[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + k[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=(k[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    c_tile = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_tile, acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@inductor_tile.jit
def matmul_pointers_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                           stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # The tutorial's form: pointer tiles carried around the loop and advanced by BLOCK_K, rows and
    # columns wrapped with % (so that every load is in bounds without a mask); the compiler rebuilds
    # the pointers from the loop index (pointer-induction)
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


#: attention_fwd_kernel's runtime parameters for fp16 tensors (`inductor_tile.compile(signature=...)`)
ATTENTION_SIGNATURE = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "seq_len": "i32",
                       "scale": "fp32", **{f"stride_{t}{d}": "i32" for t, d in ("qh", "qm", "kh", "kn", "vh", "vn",
                                                                                 "oh", "om")}}


@inductor_tile.jit
def attention_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, scale,
                         stride_qh, stride_qm, stride_kh, stride_kn, stride_vh, stride_vn, stride_oh, stride_om,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # q, k, v, o: [batch * heads, seq_len, HEAD_DIM] with unit stride along HEAD_DIM
    first_query = tl.program_id(0) * BLOCK_M
    head = tl.program_id(1)
    queries = first_query + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    offsets = tl.arange(0, BLOCK_N)
    q = tl.load(q_ptr + head * stride_qh + queries[:, None] * stride_qm + dims[None, :],
                mask=queries[:, None] < seq_len, other=0.0)
    running_max = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    running_sum = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    log2_scale = scale * 1.4426950408889634  # softmax with exp2: e^x = 2^(x log2 e)
    last_key = tl.minimum(first_query + BLOCK_M, seq_len)  # causal: no key after the block's last query
    for first_key in range(0, last_key, BLOCK_N):
        keys = first_key + offsets
        # K transposed, [HEAD_DIM, BLOCK_N], read straight from memory with swapped strides
        k_t = tl.load(k_ptr + head * stride_kh + keys[None, :] * stride_kn + dims[:, None],
                      mask=keys[None, :] < seq_len, other=0.0)
        scores = tl.dot(q, k_t) * log2_scale
        visible = (keys[None, :] <= queries[:, None]) & (keys[None, :] < seq_len)
        scores = tl.where(visible, scores, -float("inf"))
        new_max = tl.maximum(running_max, tl.max(scores, 1))
        p = tl.exp2(scores - new_max[:, None])
        rescale = tl.exp2(running_max - new_max)
        running_sum = running_sum * rescale + tl.sum(p, 1)
        v = tl.load(v_ptr + head * stride_vh + keys[:, None] * stride_vn + dims[None, :],
                    mask=keys[:, None] < seq_len, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * rescale[:, None])
        running_max = new_max
    out = acc / running_sum[:, None]
    tl.store(o_ptr + head * stride_oh + queries[:, None] * stride_om + dims[None, :], out,
             mask=queries[:, None] < seq_len)


def matmul(a, b, out=None, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=3):
    """C = A @ B (2-D torch tensors, any strides) with `matmul_kernel`; C is fp32 unless `out` is given."""
    import torch

    M, K = a.shape
    N = b.shape[1]
    c = out if out is not None else torch.empty((M, N), dtype=torch.float32, device=a.device)
    grid = (triton_cdiv(M, BLOCK_M) * triton_cdiv(N, BLOCK_N),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                        num_warps=num_warps, num_stages=num_stages)
    return c


def matmul_pointers(a, b, out=None, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, num_warps=4):
    """C = A @ B with the tutorial-form `matmul_pointers_kernel`; C is fp32 unless `out` is given."""
    import torch

    M, K = a.shape
    N = b.shape[1]
    c = out if out is not None else torch.empty((M, N), dtype=torch.float32, device=a.device)
    grid = (triton_cdiv(M, BLOCK_M), triton_cdiv(N, BLOCK_N))
    matmul_pointers_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                                 c.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=num_warps)
    return c


def attention(q, k, v, scale, out=None, BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=3):
    """Causal softmax(q k^T * scale) v for [batch*heads, seq, head_dim] tensors with `attention_fwd_kernel`."""
    import torch

    heads, seq_len, head_dim = q.shape
    o = out if out is not None else torch.empty_like(q)
    grid = (triton_cdiv(seq_len, BLOCK_M), heads)
    attention_fwd_kernel[grid](q, k, v, o, seq_len, scale, q.stride(0), q.stride(1), k.stride(0), k.stride(1),
                               v.stride(0), v.stride(1), o.stride(0), o.stride(1), HEAD_DIM=head_dim,
                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=num_warps, num_stages=num_stages)
    return o


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b
