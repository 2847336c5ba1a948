// RUN: tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32},accelerate-matmul,dce' %s --split-input-file | filecheck %s
// accelerate-matmul: fp16/bf16 dots with fp32 results take the mma.sync layout (NVIDIA sm_80+),
// their operands the dot-operand layouts of it; the result goes back to its old layout for
// its users. convert-to-ttgir alone gives every dot the FMA layouts (chunks 2 and 3 keep them).

// A [32, 16] x [16, 64] fp16 dot: 32 rows cannot give 4 warps 16 rows each, so the warps lie
// along N ([1, 4]: 16 columns each). Values of the dot's block are converted right before it: the
// accumulator first, then a and b, so that only operand conversions lie between an operand's and the dot
// (the lowering then leaves both tiles in shared memory for it: to_llvm/dot_operands.deferred_dot).
// CHECK-LABEL: func.func @mm
// CHECK:      %a = tt.load
// CHECK:      %b = tt.load
// CHECK:      %acc = tt.splat
// CHECK:      %[[C:.*]] = ttg.convert_layout %acc : {{.*}} -> tensor<32x64xf32, [[MMA:#ttg.nvidia_mma<\{versionMajor = 2, warpsPerCTA = .1, 4.\}>]]>
// CHECK-NEXT: %[[A:.*]] = ttg.convert_layout %a : {{.*}} -> tensor<32x16xf16, #ttg.dot_op<{opIdx = 0, parent = [[MMA]]}>>
// CHECK-NEXT: %[[B:.*]] = ttg.convert_layout %b : {{.*}} -> tensor<16x64xf16, #ttg.dot_op<{opIdx = 1, parent = [[MMA]]}>>
// CHECK-NEXT: %[[D:.*]] = tt.dot %[[A]], %[[B]], %[[C]] {{.*}} -> tensor<32x64xf32, [[MMA]]>
// CHECK-NEXT: %{{.*}} = ttg.convert_layout %[[D]] : tensor<32x64xf32, [[MMA]]> -> tensor<32x64xf32, [[OLD:#ttg.blocked<\{sizePerThread = .4, 4.[^}]*\}>]]>
// CHECK-NOT:  nvidia_mma
func.func @mm(%pa: !tt.ptr<f16>, %pb: !tt.ptr<f16>, %pc: !tt.ptr<f32>) {
  %r32 = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %r16 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %r64 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %sa = tt.splat %pa : !tt.ptr<f16> -> tensor<32x16x!tt.ptr<f16>>
  %rowa = tt.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %cola = tt.expand_dims %r16 {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rowab = tt.broadcast %rowa : tensor<32x1xi32> -> tensor<32x16xi32>
  %colab = tt.broadcast %cola : tensor<1x16xi32> -> tensor<32x16xi32>
  %c16 = arith.constant 16 : i32
  %c16s = tt.splat %c16 : i32 -> tensor<32x16xi32>
  %rowoff = arith.muli %rowab, %c16s : tensor<32x16xi32>
  %offa = arith.addi %rowoff, %colab : tensor<32x16xi32>
  %ptra = tt.addptr %sa, %offa : tensor<32x16x!tt.ptr<f16>>, tensor<32x16xi32>
  %a = tt.load %ptra : tensor<32x16x!tt.ptr<f16>> -> tensor<32x16xf16>
  %sb = tt.splat %pb : !tt.ptr<f16> -> tensor<16x64x!tt.ptr<f16>>
  %rowb = tt.expand_dims %r16 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %colb = tt.expand_dims %r64 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rowbb = tt.broadcast %rowb : tensor<16x1xi32> -> tensor<16x64xi32>
  %colbb = tt.broadcast %colb : tensor<1x64xi32> -> tensor<16x64xi32>
  %c64 = arith.constant 64 : i32
  %c64s = tt.splat %c64 : i32 -> tensor<16x64xi32>
  %rowoffb = arith.muli %rowbb, %c64s : tensor<16x64xi32>
  %offb = arith.addi %rowoffb, %colbb : tensor<16x64xi32>
  %ptrb = tt.addptr %sb, %offb : tensor<16x64x!tt.ptr<f16>>, tensor<16x64xi32>
  %b = tt.load %ptrb : tensor<16x64x!tt.ptr<f16>> -> tensor<16x64xf16>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<32x64xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<32x16xf16>, tensor<16x64xf16>, tensor<32x64xf32> -> tensor<32x64xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>>
  %rowc = tt.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %rowcb = tt.broadcast %rowc : tensor<32x1xi32> -> tensor<32x64xi32>
  %c64s2 = tt.splat %c64 : i32 -> tensor<32x64xi32>
  %rowoffc = arith.muli %rowcb, %c64s2 : tensor<32x64xi32>
  %colcb = tt.broadcast %colb : tensor<1x64xi32> -> tensor<32x64xi32>
  %offc = arith.addi %rowoffc, %colcb : tensor<32x64xi32>
  %ptrc = tt.addptr %sc, %offc : tensor<32x64x!tt.ptr<f32>>, tensor<32x64xi32>
  tt.store %ptrc, %d : tensor<32x64x!tt.ptr<f32>>, tensor<32x64xf32>
  func.return
}

// -----

// "ieee" fp32 operands stay on FMAs ("tf32": accelerate-matmul-tf32.mlir): the result keeps the FMA
// layout (4 x 4 per thread) and the operands its dot-operand layouts, whose size per thread along K
// is all of K (16).
// CHECK-LABEL: func.func @mm_f32
// CHECK-NOT:  nvidia_mma
// CHECK:      ttg.convert_layout %a : {{.*}} -> tensor<32x16xf32, #ttg.dot_op<{opIdx = 0, parent = [[FMA:#ttg.blocked<\{sizePerThread = .4, 4., threadsPerWarp = .4, 8., warpsPerCTA = .2, 2., order = .1, 0.\}>]]}>>
// CHECK-NEXT: ttg.convert_layout %b : {{.*}} -> tensor<16x64xf32, #ttg.dot_op<{opIdx = 1, parent = [[FMA]]}>>
// CHECK:      tt.dot {{.*}} -> tensor<32x64xf32, [[FMA]]>
func.func @mm_f32(%pa: !tt.ptr<f32>, %pb: !tt.ptr<f32>, %pc: !tt.ptr<f32>) {
  %r32 = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %r16 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %r64 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %sa = tt.splat %pa : !tt.ptr<f32> -> tensor<32x16x!tt.ptr<f32>>
  %rowa = tt.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %cola = tt.expand_dims %r16 {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rowab = tt.broadcast %rowa : tensor<32x1xi32> -> tensor<32x16xi32>
  %colab = tt.broadcast %cola : tensor<1x16xi32> -> tensor<32x16xi32>
  %c16 = arith.constant 16 : i32
  %c16s = tt.splat %c16 : i32 -> tensor<32x16xi32>
  %rowoff = arith.muli %rowab, %c16s : tensor<32x16xi32>
  %offa = arith.addi %rowoff, %colab : tensor<32x16xi32>
  %ptra = tt.addptr %sa, %offa : tensor<32x16x!tt.ptr<f32>>, tensor<32x16xi32>
  %a = tt.load %ptra : tensor<32x16x!tt.ptr<f32>> -> tensor<32x16xf32>
  %sb = tt.splat %pb : !tt.ptr<f32> -> tensor<16x64x!tt.ptr<f32>>
  %rowb = tt.expand_dims %r16 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %colb = tt.expand_dims %r64 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rowbb = tt.broadcast %rowb : tensor<16x1xi32> -> tensor<16x64xi32>
  %colbb = tt.broadcast %colb : tensor<1x64xi32> -> tensor<16x64xi32>
  %c64 = arith.constant 64 : i32
  %c64s = tt.splat %c64 : i32 -> tensor<16x64xi32>
  %rowoffb = arith.muli %rowbb, %c64s : tensor<16x64xi32>
  %offb = arith.addi %rowoffb, %colbb : tensor<16x64xi32>
  %ptrb = tt.addptr %sb, %offb : tensor<16x64x!tt.ptr<f32>>, tensor<16x64xi32>
  %b = tt.load %ptrb : tensor<16x64x!tt.ptr<f32>> -> tensor<16x64xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<32x64xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "ieee"} : tensor<32x16xf32>, tensor<16x64xf32>, tensor<32x64xf32> -> tensor<32x64xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>>
  %rowc = tt.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %rowcb = tt.broadcast %rowc : tensor<32x1xi32> -> tensor<32x64xi32>
  %c64s2 = tt.splat %c64 : i32 -> tensor<32x64xi32>
  %rowoffc = arith.muli %rowcb, %c64s2 : tensor<32x64xi32>
  %colcb = tt.broadcast %colb : tensor<1x64xi32> -> tensor<32x64xi32>
  %offc = arith.addi %rowoffc, %colcb : tensor<32x64xi32>
  %ptrc = tt.addptr %sc, %offc : tensor<32x64x!tt.ptr<f32>>, tensor<32x64xi32>
  tt.store %ptrc, %d : tensor<32x64x!tt.ptr<f32>>, tensor<32x64xf32>
  func.return
}

// -----

// A [16, 16] x [16, 16] fp16 dot is too small for 4 warps of mma.sync: FMAs.
// CHECK-LABEL: func.func @mm_small
// CHECK-NOT:  nvidia_mma
// CHECK:      tt.dot {{.*}} -> tensor<16x16xf32, #ttg.blocked
func.func @mm_small(%pa: !tt.ptr<f16>, %pb: !tt.ptr<f16>, %pc: !tt.ptr<f32>) {
  %r32 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %r16 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %rn = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %sa = tt.splat %pa : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  %rowa = tt.expand_dims %r32 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %cola = tt.expand_dims %r16 {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rowab = tt.broadcast %rowa : tensor<16x1xi32> -> tensor<16x16xi32>
  %colab = tt.broadcast %cola : tensor<1x16xi32> -> tensor<16x16xi32>
  %c16 = arith.constant 16 : i32
  %c16s = tt.splat %c16 : i32 -> tensor<16x16xi32>
  %rowoff = arith.muli %rowab, %c16s : tensor<16x16xi32>
  %offa = arith.addi %rowoff, %colab : tensor<16x16xi32>
  %ptra = tt.addptr %sa, %offa : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
  %a = tt.load %ptra : tensor<16x16x!tt.ptr<f16>> -> tensor<16x16xf16>
  %sb = tt.splat %pb : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  %rowb = tt.expand_dims %r16 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %colb = tt.expand_dims %rn {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rowbb = tt.broadcast %rowb : tensor<16x1xi32> -> tensor<16x16xi32>
  %colbb = tt.broadcast %colb : tensor<1x16xi32> -> tensor<16x16xi32>
  %cn = arith.constant 16 : i32
  %cns = tt.splat %cn : i32 -> tensor<16x16xi32>
  %rowoffb = arith.muli %rowbb, %cns : tensor<16x16xi32>
  %offb = arith.addi %rowoffb, %colbb : tensor<16x16xi32>
  %ptrb = tt.addptr %sb, %offb : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
  %b = tt.load %ptrb : tensor<16x16x!tt.ptr<f16>> -> tensor<16x16xf16>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<16x16xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %rowc = tt.expand_dims %r32 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %rowcb = tt.broadcast %rowc : tensor<16x1xi32> -> tensor<16x16xi32>
  %cns2 = tt.splat %cn : i32 -> tensor<16x16xi32>
  %rowoffc = arith.muli %rowcb, %cns2 : tensor<16x16xi32>
  %colcb = tt.broadcast %colb : tensor<1x16xi32> -> tensor<16x16xi32>
  %offc = arith.addi %rowoffc, %colcb : tensor<16x16xi32>
  %ptrc = tt.addptr %sc, %offc : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  tt.store %ptrc, %d : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xf32>
  func.return
}

// -----

// Values defined before a loop are converted there, once, right after their definitions: a and the loaded
// accumulator of a dot in the loop; b, loaded in the loop, is converted right before the dot.
// CHECK-LABEL: func.func @hoisted
// CHECK:      %a = tt.load
// CHECK-NEXT: %[[A:.*]] = ttg.convert_layout %a : {{.*}} -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = [[MMA:#ttg.nvidia_mma<\{versionMajor = 2, warpsPerCTA = .4, 1.\}>]]}>>
// CHECK:      %acc = tt.load
// CHECK-NEXT: %[[C:.*]] = ttg.convert_layout %acc : {{.*}} -> tensor<64x64xf32, [[MMA]]>
// CHECK:      scf.for
// CHECK:      %b = tt.load
// CHECK:      %[[B:.*]] = ttg.convert_layout %b : {{.*}} -> tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = [[MMA]]}>>
// CHECK-NEXT: tt.dot %[[A]], %[[B]], %[[C]] {{.*}} -> tensor<64x64xf32, [[MMA]]>
func.func @hoisted(%pa: !tt.ptr<f16>, %pb: !tt.ptr<f16>, %pacc: !tt.ptr<f32>, %pc: !tt.ptr<f32>) {
  %sa = tt.splat %pa : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>>
  %a = tt.load %sa : tensor<64x32x!tt.ptr<f16>> -> tensor<64x32xf16>
  %sacc = tt.splat %pacc : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
  %acc = tt.load %sacc : tensor<64x64x!tt.ptr<f32>> -> tensor<64x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  scf.for %i = %c0 to %c4 step %c1 : i32 {
    %sb = tt.splat %pb : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
    %b = tt.load %sb : tensor<32x64x!tt.ptr<f16>> -> tensor<32x64xf16>
    %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
    tt.store %sc, %d : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xf32>
  }
  func.return
}
