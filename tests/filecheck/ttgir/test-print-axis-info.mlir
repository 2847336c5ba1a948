// RUN: tile-opt -p test-print-axis-info %s --split-input-file | filecheck %s
// The axis-info analysis (contiguity, divisibility, constancy per dimension), printed as a
// `tt.axis_info` attribute on every single-result op.

// A 1-D block of a kernel: the range is contiguous, the splat of pid * 256 constant and
// divisible by 256, their sum contiguous and divisible by 256, the pointers contiguous and
// 16-byte aligned (the argument's divisibility). `offs < n` is constant over runs of 16
// when n is a multiple of 16 (the `tt.divisibility` of the argument), over runs of 1 when
// nothing is known of m. A loaded value knows nothing.
// CHECK-LABEL: func.func @vector_add
// CHECK: %pid = tt.get_program_id {tt.axis_info = "contiguity = [1], divisibility = [1], constancy = [1]"
// CHECK: %c256 = arith.constant {tt.axis_info = "contiguity = [1], divisibility = [256], constancy = [1]"
// CHECK: %start = arith.muli %pid, %c256 {tt.axis_info = "contiguity = [1], divisibility = [256], constancy = [1]"
// CHECK: %r = tt.make_range {tt.axis_info = "contiguity = [256], divisibility = [1073741824], constancy = [1]"
// CHECK: %s = tt.splat %start {tt.axis_info = "contiguity = [1], divisibility = [256], constancy = [256]"
// CHECK: %offs = arith.addi %s, %r {tt.axis_info = "contiguity = [256], divisibility = [256], constancy = [1]"
// CHECK: %ns = tt.splat %n {tt.axis_info = "contiguity = [1], divisibility = [16], constancy = [256]"
// CHECK: %mask = arith.cmpi slt, %offs, %ns {tt.axis_info = "contiguity = [1], divisibility = [1], constancy = [16]"
// CHECK: %ms = tt.splat %m {tt.axis_info = "contiguity = [1], divisibility = [1], constancy = [256]"
// CHECK: %mask2 = arith.cmpi slt, %offs, %ms {tt.axis_info = "contiguity = [1], divisibility = [1], constancy = [1]"
// CHECK: %xs = tt.splat %x {tt.axis_info = "contiguity = [1], divisibility = [16], constancy = [256]"
// CHECK: %ptrs = tt.addptr %xs, %offs {tt.axis_info = "contiguity = [256], divisibility = [16], constancy = [1]"
// CHECK: %v = tt.load %ptrs mask %mask {tt.axis_info = "contiguity = [1], divisibility = [1], constancy = [1]"
func.func @vector_add(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}, %m: i32) {
  %pid = tt.get_program_id {axis = 0 : i32} : i32
  %c256 = arith.constant 256 : i32
  %start = arith.muli %pid, %c256 : i32
  %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %s = tt.splat %start : i32 -> tensor<256xi32>
  %offs = arith.addi %s, %r : tensor<256xi32>
  %ns = tt.splat %n : i32 -> tensor<256xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<256xi32>
  %ms = tt.splat %m : i32 -> tensor<256xi32>
  %mask2 = arith.cmpi slt, %offs, %ms : tensor<256xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
  %ptrs = tt.addptr %xs, %offs : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
  %v = tt.load %ptrs mask %mask : tensor<256x!tt.ptr<f32>> -> tensor<256xf32>
  func.return
}

// -----

// A 2-D tile `p + rows[:, None] * 64 + cols[None, :]` of f16: contiguous along dim 1 in
// runs of 64, whose first addresses are 16-byte aligned; along dim 0 each element is only
// 2-byte aligned. Multiplying by an unknown stride loses everything.
// CHECK-LABEL: func.func @tile_2d
// CHECK: %r = tt.make_range {tt.axis_info = "contiguity = [16], divisibility = [1073741824], constancy = [1]"
// CHECK: %c = tt.make_range {tt.axis_info = "contiguity = [64], divisibility = [1073741824], constancy = [1]"
// CHECK: %re = tt.expand_dims %r {tt.axis_info = "contiguity = [16, 1], divisibility = [1073741824, 1], constancy = [1, 1]"
// CHECK: %c64 = arith.constant {tt.axis_info = "contiguity = [1], divisibility = [64], constancy = [1]"
// CHECK: %s64 = tt.splat %c64 {tt.axis_info = "contiguity = [1, 1], divisibility = [64, 64], constancy = [16, 1]"
// CHECK: %rows = arith.muli %re, %s64 {tt.axis_info = "contiguity = [1, 1], divisibility = [64, 64], constancy = [1, 1]"
// CHECK: %ce = tt.expand_dims %c {tt.axis_info = "contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [1, 1]"
// CHECK: %rb = tt.broadcast %rows {tt.axis_info = "contiguity = [1, 1], divisibility = [64, 64], constancy = [1, 64]"
// CHECK: %cb = tt.broadcast %ce {tt.axis_info = "contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [16, 1]"
// CHECK: %offs = arith.addi %rb, %cb {tt.axis_info = "contiguity = [1, 64], divisibility = [1, 64], constancy = [1, 1]"
// CHECK: %ps = tt.splat %p {tt.axis_info = "contiguity = [1, 1], divisibility = [16, 16], constancy = [16, 64]"
// CHECK: %ptrs = tt.addptr %ps, %offs {tt.axis_info = "contiguity = [1, 64], divisibility = [2, 16], constancy = [1, 1]"
// CHECK: %ss = tt.splat %stride {tt.axis_info = "contiguity = [1, 1], divisibility = [1, 1], constancy = [16, 1]"
// CHECK: %srows = arith.muli %re, %ss {tt.axis_info = "contiguity = [1, 1], divisibility = [1, 1], constancy = [1, 1]"
func.func @tile_2d(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %stride: i32) {
  %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %c = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %re = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %c64 = arith.constant 64 : i32
  %s64 = tt.splat %c64 : i32 -> tensor<16x1xi32>
  %rows = arith.muli %re, %s64 : tensor<16x1xi32>
  %ce = tt.expand_dims %c {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rb = tt.broadcast %rows : tensor<16x1xi32> -> tensor<16x64xi32>
  %cb = tt.broadcast %ce : tensor<1x64xi32> -> tensor<16x64xi32>
  %offs = arith.addi %rb, %cb : tensor<16x64xi32>
  %ps = tt.splat %p : !tt.ptr<f16> -> tensor<16x64x!tt.ptr<f16>>
  %ptrs = tt.addptr %ps, %offs : tensor<16x64x!tt.ptr<f16>>, tensor<16x64xi32>
  %ss = tt.splat %stride : i32 -> tensor<16x1xi32>
  %srows = arith.muli %re, %ss : tensor<16x1xi32>
  func.return
}

// -----

// Index arithmetic: a range times 2 is not contiguous; % 32 and & 7 cut it into runs of
// 32 and 8; / 32 is constant over runs of 32. Hints (tl.max_contiguous, tl.multiple_of)
// override the computed values. The induction variable of a loop from 0 by 16 is a
// multiple of 16, so is a range starting at it.
// CHECK-LABEL: func.func @index_math
// CHECK: %r = tt.make_range {tt.axis_info = "contiguity = [128], divisibility = [1073741824], constancy = [1]"
// CHECK: %c2 = arith.constant {tt.axis_info = "contiguity = [1], divisibility = [2], constancy = [1]"
// CHECK: %s2 = tt.splat %c2 {tt.axis_info = "contiguity = [1], divisibility = [2], constancy = [128]"
// CHECK: %strided = arith.muli %r, %s2 {tt.axis_info = "contiguity = [1], divisibility = [2], constancy = [1]"
// CHECK: %c32 = arith.constant {tt.axis_info = "contiguity = [1], divisibility = [32], constancy = [1]"
// CHECK: %s32 = tt.splat %c32 {tt.axis_info = "contiguity = [1], divisibility = [32], constancy = [128]"
// CHECK: %col = arith.remsi %r, %s32 {tt.axis_info = "contiguity = [32], divisibility = [32], constancy = [1]"
// CHECK: %row = arith.divsi %r, %s32 {tt.axis_info = "contiguity = [1], divisibility = [1], constancy = [32]"
// CHECK: %c7 = arith.constant {tt.axis_info = "contiguity = [1], divisibility = [1], constancy = [1]"
// CHECK: %s7 = tt.splat %c7 {tt.axis_info = "contiguity = [1], divisibility = [1], constancy = [128]"
// CHECK: %low = arith.andi %r, %s7 {tt.axis_info = "contiguity = [8], divisibility = [8], constancy = [1]"
// CHECK: %hinted = arith.addi %strided, %r {tt.contiguity = array<i32: 4>, tt.divisibility = array<i32: 8>, tt.axis_info = "contiguity = [4], divisibility = [8], constancy = [1]"
// CHECK: %c0 = arith.constant {tt.axis_info = "contiguity = [1], divisibility = [1073741824], constancy = [1]"
// CHECK: %c16 = arith.constant {tt.axis_info = "contiguity = [1], divisibility = [16], constancy = [1]"
// CHECK: %is = tt.splat %i {tt.axis_info = "contiguity = [1], divisibility = [16], constancy = [128]"
// CHECK: %o = arith.addi %is, %r {tt.axis_info = "contiguity = [128], divisibility = [16], constancy = [1]"
func.func @index_math(%n: i32) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %c2 = arith.constant 2 : i32
  %s2 = tt.splat %c2 : i32 -> tensor<128xi32>
  %strided = arith.muli %r, %s2 : tensor<128xi32>
  %c32 = arith.constant 32 : i32
  %s32 = tt.splat %c32 : i32 -> tensor<128xi32>
  %col = arith.remsi %r, %s32 : tensor<128xi32>
  %row = arith.divsi %r, %s32 : tensor<128xi32>
  %c7 = arith.constant 7 : i32
  %s7 = tt.splat %c7 : i32 -> tensor<128xi32>
  %low = arith.andi %r, %s7 : tensor<128xi32>
  %hinted = arith.addi %strided, %r {tt.contiguity = array<i32: 4>, tt.divisibility = array<i32: 8>} : tensor<128xi32>
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  scf.for %i = %c0 to %n step %c16 : i32 {
    %is = tt.splat %i : i32 -> tensor<128xi32>
    %o = arith.addi %is, %r : tensor<128xi32>
  }
  func.return
}

// -----

// A loop-carried pointer tensor advanced by a multiple of 16 bytes each iteration keeps its
// init's contiguity and alignment (the loop is iterated to a fixpoint); a counter that
// starts at 0 and adds 1 is known nothing about.
// CHECK-LABEL: func.func @carried
// CHECK: %next = tt.addptr %q, %s128 {tt.axis_info = "contiguity = [128], divisibility = [16], constancy = [1]"
// CHECK: %k1 = arith.addi %k, %c1 {tt.axis_info = "contiguity = [1], divisibility = [1], constancy = [1]"
func.func @carried(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c128 = arith.constant 128 : i32
  %s128 = tt.splat %c128 : i32 -> tensor<128xi32>
  %res:2 = scf.for %i = %c0 to %n step %c1 iter_args(%q = %ptrs, %k = %c0) -> (tensor<128x!tt.ptr<f32>>, i32) : i32 {
    %x = tt.load %q : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
    tt.store %q, %x : tensor<128x!tt.ptr<f32>>, tensor<128xf32>
    %next = tt.addptr %q, %s128 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %k1 = arith.addi %k, %c1 : i32
    scf.yield %next, %k1 : tensor<128x!tt.ptr<f32>>, i32
  }
  func.return
}

// -----

// The matmul tutorial's `(pid * 128 + arange) % n` with n a multiple of 16 (not a constant):
// runs of 16 stay runs, starting at multiples of 16 (the wrap-around points are multiples of
// n); with nothing known of m, nothing is known of the remainder's runs.
// CHECK-LABEL: func.func @wrapped
// CHECK: %w = arith.remsi %o, %ns {tt.axis_info = "contiguity = [16], divisibility = [16], constancy = [1]"
// CHECK: %u = arith.remsi %o, %ms {tt.axis_info = "contiguity = [1], divisibility = [1], constancy = [1]"
func.func @wrapped(%n: i32 {tt.divisibility = 16 : i32}, %m: i32) {
  %pid = tt.get_program_id {axis = 0 : i32} : i32
  %c128 = arith.constant 128 : i32
  %start = arith.muli %pid, %c128 : i32
  %ss = tt.splat %start : i32 -> tensor<128xi32>
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %o = arith.addi %ss, %r : tensor<128xi32>
  %ns = tt.splat %n : i32 -> tensor<128xi32>
  %w = arith.remsi %o, %ns : tensor<128xi32>
  %ms = tt.splat %m : i32 -> tensor<128xi32>
  %u = arith.remsi %o, %ms : tensor<128xi32>
  func.return
}
