// RUN: tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32},accelerate-matmul{amd-arch=gfx1100},dce' %s --split-input-file | filecheck %s
// accelerate-matmul on AMD RDNA3 (amd-arch=gfx1100, wave32): fp16/bf16 dots with an fp32 accumulator take
// the #ttg.amd_wmma layout with the waves along N (16 columns per wave and instruction); their operands
// are converted to its dot-operand layouts. Dots whose N is too narrow for the waves keep FMAs.

// CHECK-LABEL: func.func @square
// CHECK: ttg.convert_layout {{.*}} -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #ttg.amd_wmma<{version = 1, warpsPerCTA = [1, 4]}>}>>
// CHECK: ttg.convert_layout {{.*}} -> tensor<32x64xf16, #ttg.dot_op<{opIdx = 1, parent = #ttg.amd_wmma<{version = 1, warpsPerCTA = [1, 4]}>}>>
// CHECK: tt.dot {{.*}} -> tensor<64x64xf32, #ttg.amd_wmma<{version = 1, warpsPerCTA = [1, 4]}>>
func.func @square(%x: f16, %y: f16, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : f16 -> tensor<64x32xf16>
  %b = tt.splat %y : f16 -> tensor<32x64xf16>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<64x64xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @bf16
// CHECK: tt.dot {{.*}} -> tensor<16x128xf32, #ttg.amd_wmma<{version = 1, warpsPerCTA = [1, 4]}>>
func.func @bf16(%x: bf16, %y: bf16, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : bf16 -> tensor<16x16xbf16>
  %b = tt.splat %y : bf16 -> tensor<16x128xbf16>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<16x128xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<16x16xbf16>, tensor<16x128xbf16>, tensor<16x128xf32> -> tensor<16x128xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<16x128x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<16x128x!tt.ptr<f32>>, tensor<16x128xf32>
  func.return
}

// -----

// N = 32 < 16 x 4 waves: FMAs.
// CHECK-LABEL: func.func @narrow_n
// CHECK-NOT: amd_wmma
// CHECK: tt.dot {{.*}} -> tensor<64x32xf32, #ttg.blocked
func.func @narrow_n(%x: f16, %y: f16, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : f16 -> tensor<64x32xf16>
  %b = tt.splat %y : f16 -> tensor<32x32xf16>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<64x32xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<64x32xf16>, tensor<32x32xf16>, tensor<64x32xf32> -> tensor<64x32xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<64x32x!tt.ptr<f32>>, tensor<64x32xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @fp32_stays_fma
// CHECK-NOT: amd_wmma
// CHECK: tt.dot {{.*}} -> tensor<64x64xf32, #ttg.blocked
func.func @fp32_stays_fma(%x: f32, %y: f32, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : f32 -> tensor<64x32xf32>
  %b = tt.splat %y : f32 -> tensor<32x64xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<64x64xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xf32>
  func.return
}
