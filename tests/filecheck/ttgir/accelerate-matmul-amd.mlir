// RUN: tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=64},accelerate-matmul{amd-arch=gfx942},dce' %s --split-input-file | filecheck %s
// accelerate-matmul on AMD CDNA (amd-arch): fp16/bf16 dots with an fp32 accumulator take the
// #ttg.amd_mfma layout, 32x32x8 with the waves along N when N holds 32 columns per wave, else
// 16x16x16 with the waves along N, then along M; their operands are converted to its dot-operand
// layouts. fp32 dots and dots too small for the waves keep the FMA (blocked) layouts.

// N = 128 = 32 columns x 4 waves: 32x32x8 along N, operands in its dot-operand layouts.
// CHECK-LABEL: func.func @wide_n
// CHECK: ttg.convert_layout {{.*}} -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #ttg.amd_mfma<{instrShape = [32, 32, 8], warpsPerCTA = [1, 4]}>}>>
// CHECK: ttg.convert_layout {{.*}} -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #ttg.amd_mfma<{instrShape = [32, 32, 8], warpsPerCTA = [1, 4]}>}>>
// CHECK: tt.dot {{.*}} -> tensor<64x128xf32, #ttg.amd_mfma<{instrShape = [32, 32, 8], warpsPerCTA = [1, 4]}>>
func.func @wide_n(%x: f16, %y: f16, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : f16 -> tensor<64x32xf16>
  %b = tt.splat %y : f16 -> tensor<32x128xf16>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<64x128xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<64x32xf16>, tensor<32x128xf16>, tensor<64x128xf32> -> tensor<64x128xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x128x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<64x128x!tt.ptr<f32>>, tensor<64x128xf32>
  func.return
}

// -----

// 64 x 64 (bf16): N too narrow for 32x32 per wave; 16x16x16 with the waves along N.
// CHECK-LABEL: func.func @square
// CHECK: tt.dot {{.*}} -> tensor<64x64xf32, #ttg.amd_mfma<{instrShape = [16, 16, 16], warpsPerCTA = [1, 4]}>>
func.func @square(%x: bf16, %y: bf16, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : bf16 -> tensor<64x32xbf16>
  %b = tt.splat %y : bf16 -> tensor<32x64xbf16>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<64x64xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xf32>
  func.return
}

// -----

// 32 columns, 64 rows: the waves go along M with 16x16x16.
// CHECK-LABEL: func.func @narrow_n
// CHECK: tt.dot {{.*}} -> tensor<64x32xf32, #ttg.amd_mfma<{instrShape = [16, 16, 16], warpsPerCTA = [4, 1]}>>
func.func @narrow_n(%x: f16, %y: f16, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : f16 -> tensor<64x16xf16>
  %b = tt.splat %y : f16 -> tensor<16x32xf16>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<64x32xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<64x16xf16>, tensor<16x32xf16>, tensor<64x32xf32> -> tensor<64x32xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<64x32x!tt.ptr<f32>>, tensor<64x32xf32>
  func.return
}

// -----

// fp32 operands keep the FMA path (a blocked result layout).
// CHECK-LABEL: func.func @fp32_stays_fma
// CHECK-NOT: amd_mfma
// CHECK: tt.dot {{.*}} -> tensor<64x128xf32, #ttg.blocked
func.func @fp32_stays_fma(%x: f32, %y: f32, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : f32 -> tensor<64x32xf32>
  %b = tt.splat %y : f32 -> tensor<32x128xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<64x128xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<64x32xf32>, tensor<32x128xf32>, tensor<64x128xf32> -> tensor<64x128xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x128x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<64x128x!tt.ptr<f32>>, tensor<64x128xf32>
  func.return
}

// -----

// K = 8 with N too narrow for 32x32x8: no 16x16x16 either, FMAs.
// CHECK-LABEL: func.func @k_too_short
// CHECK-NOT: amd_mfma
// CHECK: tt.dot {{.*}} -> tensor<64x64xf32, #ttg.blocked
func.func @k_too_short(%x: f16, %y: f16, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : f16 -> tensor<64x8xf16>
  %b = tt.splat %y : f16 -> tensor<8x64xf16>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<64x64xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<64x8xf16>, tensor<8x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xf32>
  func.return
}
