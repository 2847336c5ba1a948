// RUN: tile-opt %s | tile-opt | filecheck %s
// The AMD matrix-core layouts parse and print back: #ttg.amd_mfma (CDNA: instruction shape and waves) and
// #ttg.amd_wmma (RDNA3), as result layouts of tt.dot and as parents of #ttg.dot_op.

#mfma = #ttg.amd_mfma<{instrShape = [32, 32, 8], warpsPerCTA = [1, 4]}>
#mfma16 = #ttg.amd_mfma<{instrShape = [16, 16, 16], warpsPerCTA = [4, 1]}>
#wmma = #ttg.amd_wmma<{version = 1, warpsPerCTA = [1, 2]}>

// CHECK-LABEL: func.func @mfma
// CHECK: tt.dot %a, %b, %c {input_precision = "tf32"} : tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #ttg.amd_mfma<{instrShape = [32, 32, 8], warpsPerCTA = [1, 4]}>}>>, tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #ttg.amd_mfma<{instrShape = [32, 32, 8], warpsPerCTA = [1, 4]}>}>>, tensor<64x128xf32, #ttg.amd_mfma<{instrShape = [32, 32, 8], warpsPerCTA = [1, 4]}>> -> tensor<64x128xf32, #ttg.amd_mfma<{instrShape = [32, 32, 8], warpsPerCTA = [1, 4]}>>
func.func @mfma(%a: tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mfma}>>, %b: tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mfma}>>, %c: tensor<64x128xf32, #mfma>) -> tensor<64x128xf32, #mfma> {
  %d = tt.dot %a, %b, %c {input_precision = "tf32"} : tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mfma}>>, tensor<32x128xf16, #ttg.dot_op<{opIdx = 1, parent = #mfma}>>, tensor<64x128xf32, #mfma> -> tensor<64x128xf32, #mfma>
  func.return %d : tensor<64x128xf32, #mfma>
}

// CHECK-LABEL: func.func @mfma16
// CHECK: tensor<64x16xbf16, #ttg.dot_op<{opIdx = 0, parent = #ttg.amd_mfma<{instrShape = [16, 16, 16], warpsPerCTA = [4, 1]}>}>>
func.func @mfma16(%a: tensor<64x16xbf16, #ttg.dot_op<{opIdx = 0, parent = #mfma16}>>, %b: tensor<16x16xbf16, #ttg.dot_op<{opIdx = 1, parent = #mfma16}>>, %c: tensor<64x16xf32, #mfma16>) -> tensor<64x16xf32, #mfma16> {
  %d = tt.dot %a, %b, %c {input_precision = "tf32"} : tensor<64x16xbf16, #ttg.dot_op<{opIdx = 0, parent = #mfma16}>>, tensor<16x16xbf16, #ttg.dot_op<{opIdx = 1, parent = #mfma16}>>, tensor<64x16xf32, #mfma16> -> tensor<64x16xf32, #mfma16>
  func.return %d : tensor<64x16xf32, #mfma16>
}

// CHECK-LABEL: func.func @wmma
// CHECK: ttg.convert_layout %c : tensor<32x32xf32, #ttg.amd_wmma<{version = 1, warpsPerCTA = [1, 2]}>> -> tensor<32x32xf32, #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 1], order = [1, 0]}>>
func.func @wmma(%c: tensor<32x32xf32, #wmma>) {
  %d = ttg.convert_layout %c : tensor<32x32xf32, #wmma> -> tensor<32x32xf32, #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 1], order = [1, 0]}>>
  func.return
}
