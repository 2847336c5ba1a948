// RUN: TILE_TF32_MMA=1 tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32},accelerate-matmul,dce' %s --split-input-file | filecheck %s
// RUN: TILE_TF32_MMA=1 tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32},accelerate-matmul{mma-version=3},dce' %s --split-input-file | filecheck %s --check-prefix=V3
// accelerate-matmul on fp32 dots: "tf32" and "tf32x3" go to tensor cores (the mma layout and its operand
// layouts, lowered to mma.sync m16n8k8 tf32, or on sm_90 with version 3 to wgmma m64nNk8 tf32); "ieee"
// keeps the FMA layouts. The tensor-core path is opt-in (TILE_TF32_MMA=1) until it passes on a GPU.

// CHECK-LABEL: func.func @tf32
// CHECK: ttg.convert_layout {{.*}} -> tensor<64x32xf32, #ttg.dot_op<{opIdx = 0, parent = [[MMA:#ttg.nvidia_mma<\{versionMajor = 2, warpsPerCTA = .4, 1.\}>]]}>>
// CHECK: ttg.convert_layout {{.*}} -> tensor<32x64xf32, #ttg.dot_op<{opIdx = 1, parent = [[MMA]]}>>
// CHECK: tt.dot {{.*}} {input_precision = "tf32"} {{.*}} -> tensor<64x64xf32, [[MMA]]>
// V3-LABEL: func.func @tf32
// V3: tt.dot {{.*}} {input_precision = "tf32"} {{.*}} -> tensor<64x64xf32, #ttg.nvidia_mma<{versionMajor = 3, warpsPerCTA = [4, 1]}>>
func.func @tf32(%x: f32, %y: f32, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : f32 -> tensor<64x32xf32>
  %b = tt.splat %y : f32 -> tensor<32x64xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<64x64xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @tf32x3
// CHECK: tt.dot {{.*}} {input_precision = "tf32x3"} {{.*}} -> tensor<64x64xf32, #ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [4, 1]}>>
// V3-LABEL: func.func @tf32x3
// V3: tt.dot {{.*}} {input_precision = "tf32x3"} {{.*}} -> tensor<64x64xf32, #ttg.nvidia_mma<{versionMajor = 3, warpsPerCTA = [4, 1]}>>
func.func @tf32x3(%x: f32, %y: f32, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : f32 -> tensor<64x32xf32>
  %b = tt.splat %y : f32 -> tensor<32x64xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<64x64xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32x3"} : tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @ieee
// CHECK-NOT: nvidia_mma
// CHECK: tt.dot {{.*}} {input_precision = "ieee"} {{.*}} -> tensor<64x64xf32, #ttg.blocked
// CHECK-NOT: nvidia_mma
// V3-LABEL: func.func @ieee
// V3-NOT: nvidia_mma
func.func @ieee(%x: f32, %y: f32, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : f32 -> tensor<64x32xf32>
  %b = tt.splat %y : f32 -> tensor<32x64xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<64x64xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "ieee"} : tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xf32>
  func.return
}

// -----

// A loaded accumulator: its conversion to the mma layout comes first, then a's and b's, right before the
// dot. Its conversion goes through shared memory: between b's and the dot it would keep b's tile from being
// left in shared memory for the dot (to_llvm/dot_operands.deferred_dot; wgmma reads b from there).
// CHECK-LABEL: func.func @loaded_acc
// CHECK: %[[ACC:.*]] = ttg.convert_layout {{.*}} -> tensor<64x64xf32, #ttg.nvidia_mma
// CHECK-NEXT: %[[A:.*]] = ttg.convert_layout {{.*}} #ttg.dot_op<{opIdx = 0
// CHECK-NEXT: %[[B:.*]] = ttg.convert_layout {{.*}} #ttg.dot_op<{opIdx = 1
// CHECK-NEXT: tt.dot %[[A]], %[[B]], %[[ACC]] {input_precision = "tf32"}
// V3-LABEL: func.func @loaded_acc
// V3: ttg.convert_layout {{.*}} -> tensor<64x64xf32, #ttg.nvidia_mma<{versionMajor = 3
// V3-NEXT: ttg.convert_layout {{.*}} #ttg.dot_op<{opIdx = 0
// V3-NEXT: ttg.convert_layout {{.*}} #ttg.dot_op<{opIdx = 1
// V3-NEXT: tt.dot
func.func @loaded_acc(%pa: !tt.ptr<f32>, %pb: !tt.ptr<f32>, %pacc: !tt.ptr<f32>, %pc: !tt.ptr<f32>) {
  %sacc = tt.splat %pacc : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
  %acc = tt.load %sacc : tensor<64x64x!tt.ptr<f32>> -> tensor<64x64xf32>
  %sa = tt.splat %pa : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>>
  %a = tt.load %sa : tensor<64x32x!tt.ptr<f32>> -> tensor<64x32xf32>
  %sb = tt.splat %pb : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>>
  %b = tt.load %sb : tensor<32x64x!tt.ptr<f32>> -> tensor<32x64xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xf32>
  func.return
}
