// RUN: tile-opt %s --split-input-file | tile-opt --split-input-file | filecheck %s
// tt.dot parses and prints back, in TTIR and with the TTGIR dot layouts.

// CHECK-LABEL: func.func @ttir
// CHECK: %d = tt.dot %a, %b, %c {input_precision = "ieee"} : tensor<32x16xf16>, tensor<16x64xf16>, tensor<32x64xf32> -> tensor<32x64xf32>
// CHECK: %e = tt.dot %x, %y, %z {input_precision = "tf32"} : tensor<2x16x16xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32> -> tensor<2x16x32xf32>
func.func @ttir(%a: tensor<32x16xf16>, %b: tensor<16x64xf16>, %c: tensor<32x64xf32>,
                %x: tensor<2x16x16xf32>, %y: tensor<2x16x32xf32>, %z: tensor<2x16x32xf32>) {
  %d = tt.dot %a, %b, %c {input_precision = "ieee"} : tensor<32x16xf16>, tensor<16x64xf16>, tensor<32x64xf32> -> tensor<32x64xf32>
  %e = tt.dot %x, %y, %z {input_precision = "tf32"} : tensor<2x16x16xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32> -> tensor<2x16x32xf32>
  func.return
}

// -----

#mma = #ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [4, 1]}>
#a = #ttg.dot_op<{opIdx = 0, parent = #mma}>
#b = #ttg.dot_op<{opIdx = 1, parent = #mma}>
// CHECK-LABEL: func.func @ttgir
// CHECK: tt.dot %a, %b, %c {input_precision = "tf32"} : tensor<64x32xbf16, #ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [4, 1]}>}>>, tensor<32x64xbf16, #ttg.dot_op<{opIdx = 1, parent = #ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [4, 1]}>}>>, tensor<64x64xf32, #ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [4, 1]}>>
func.func @ttgir(%a: tensor<64x32xbf16, #a>, %b: tensor<32x64xbf16, #b>, %c: tensor<64x64xf32, #mma>) {
  %d = tt.dot %a, %b, %c {input_precision = "tf32"} : tensor<64x32xbf16, #a>, tensor<32x64xbf16, #b>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
  func.return
}
