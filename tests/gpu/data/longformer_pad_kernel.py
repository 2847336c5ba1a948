# A Longformer kernel (full size, fp16, H100) whose negative-dividend floor forms faulted on the GPU (2026-11-22).
import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def tile_poi_constant_pad_nd_copy_new_zeros_permute_select_slice_5(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = (xindex // 12607488)
    x1 = ((xindex // 49248) % 256)
    x2 = ((xindex // 513) % 96)
    x3 = (xindex % 513)
    # op9 (pointwise)
    tmp0 = (x0).to(tl.int32)
    tmp1 = tl.full([1], 3, tl.int32)
    tmp2 = tmp0 == tmp1
    tmp3 = (x3).to(tl.int64)
    tmp4 = tl.full([1], 256, tl.int64)
    tmp5 = tmp3 >= tmp4
    tmp6 = ((((656384 + x3 + (513 * x1)) // 512) % 513)).to(tl.int64)
    tmp7 = tl.full([1], 512, tl.int64)
    tmp8 = tmp6 < tmp7
    tmp9 = tl.load(in_ptr0 + ((512 * (((656384 + x3 + (513 * x1)) // 512) % 513)) + (262144 * ((656384 + x3 + (513 * x1)) // 262656)) + (786432 * x2) + (786432 * ((656384 + x3 + (513 * x1)) // 787968)) + ((x3 + (513 * x1)) % 512)), mask=xmask & (tmp5) & (tmp8), other=0)
    tmp10 = tl.where(tmp8, tmp9, 0.0)
    tmp11 = tl.where(tmp5, tmp10, 0.0)
    tmp12 = tl.full([1], 3, tl.int64)
    tmp13 = tmp12 < tmp12
    tmp14 = ((((787712 + x3 + (513 * x1)) // 512) % 513)).to(tl.int64)
    tmp15 = tmp14 < tmp7
    tmp16 = tl.load(in_ptr0 + ((262144 * (((787712 + x3 + (513 * x1)) // 262656) % 3)) + (786432 * (((787712 + x3 + (513 * x1) + (787968 * x2)) // 787968) % 96)) + ((787712 + x3 + (513 * x1)) % 262656)), mask=xmask & (tmp13) & (tmp5) & (tmp15), other=0)
    tmp17 = tl.where(tmp15, tmp16, 0.0)
    tmp18 = tl.where(tmp5, tmp17, 0.0)
    tmp19 = tl.full([1], 0.0, tl.float16)
    tmp20 = tl.where(tmp5, tmp18, tmp19)
    tmp21 = tl.where(tmp13, tmp20, 0.0)
    tmp22 = tl.where(tmp13, tmp21, tmp19)
    tmp23 = tl.where(tmp5, tmp11, tmp22)
    tmp24 = (x0).to(tl.int64)
    tmp25 = tmp24 < tmp12
    tmp26 = ((((((513 * x0) + (1539 * x2) + ((((-256) + x3 + (513 * x1)) - (((((-256) + x3 + (513 * x1)) % 512) + 512) % 512)) // 512)) % 513) + 513) % 513)).to(tl.int64)
    tmp27 = tmp26 < tmp7
    tmp28 = tl.load(in_ptr0 + ((262144 * ((((x0 + (3 * x2) + ((((-256) + x3 + (513 * x1)) - (((((-256) + x3 + (513 * x1)) % 262656) + 262656) % 262656)) // 262656)) % 288) + 288) % 288)) + (((((-256) + x3 + (513 * x1) + (262656 * x0) + (787968 * x2)) % 262656) + 262656) % 262656)), mask=xmask & (tmp25) & (tmp5) & (tmp27), other=0)
    tmp29 = tl.where(tmp27, tmp28, 0.0)
    tmp30 = tl.where(tmp5, tmp29, 0.0)
    tmp31 = tl.where(tmp5, tmp30, tmp19)
    tmp32 = tl.where(tmp25, tmp31, 0.0)
    tmp33 = tl.where(tmp25, tmp32, tmp19)
    tmp34 = tl.where(tmp2, tmp23, tmp33)
    tl.store(out_ptr0 + (x3 + (513 * x2) + (49280 * x0) + (197120 * x1)), tmp34, mask=xmask)
