// RUN: tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32},accelerate-matmul{mma-version=3},dce' %s --split-input-file | filecheck %s
// accelerate-matmul with mma version 3 (sm_90, TILE_WGMMA=1): a dot that one or two warpgroups
// compute with wgmma.m64nNk16 (4 or 8 warps along M, N a multiple of 8 up to 256) takes
// `versionMajor = 3`; any other tensor-core dot keeps version 2 (mma.sync).

// CHECK-LABEL: func.func @warpgroup
// CHECK: tt.dot {{.*}} -> tensor<128x64xf32, #ttg.nvidia_mma<{versionMajor = 3, warpsPerCTA = [4, 1]}>>
func.func @warpgroup(%x: f16, %y: f16, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : f16 -> tensor<128x32xf16>
  %b = tt.splat %y : f16 -> tensor<32x64xf16>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<128x64xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<128x32xf16>, tensor<32x64xf16>, tensor<128x64xf32> -> tensor<128x64xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<128x64x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<128x64x!tt.ptr<f32>>, tensor<128x64xf32>
  func.return
}

// -----

// 32 rows: the warps lie along N, so mma.sync computes it.
// CHECK-LABEL: func.func @narrow
// CHECK: tt.dot {{.*}} -> tensor<32x64xf32, #ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [1, 4]}>>
func.func @narrow(%x: f16, %y: f16, %pc: !tt.ptr<f32>) {
  %a = tt.splat %x : f16 -> tensor<32x16xf16>
  %b = tt.splat %y : f16 -> tensor<16x64xf16>
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tt.splat %zero : f32 -> tensor<32x64xf32>
  %d = tt.dot %a, %b, %acc {input_precision = "tf32"} : tensor<32x16xf16>, tensor<16x64xf16>, tensor<32x64xf32> -> tensor<32x64xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>>
  tt.store %sc, %d : tensor<32x64x!tt.ptr<f32>>, tensor<32x64xf32>
  func.return
}
