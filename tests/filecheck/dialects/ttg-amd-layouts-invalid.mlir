// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Malformed AMD matrix-core layouts are refused where they are written.

func.func @mfma_shape(%x: tensor<32x32xf32, #ttg.amd_mfma<{instrShape = [32, 32, 16], warpsPerCTA = [1, 4]}>>) {
  func.return
}
// CHECK: #ttg.amd_mfma: instrShape must be [32, 32, 8] or [16, 16, 16]

// -----

func.func @mfma_waves(%x: tensor<32x32xf32, #ttg.amd_mfma<{instrShape = [32, 32, 8], warpsPerCTA = [4, 1]}>>) {
  func.return
}
// CHECK: #ttg.amd_mfma: warpsPerCTA must be [1, w] ([w, 1] too for 16x16x16)

// -----

func.func @wmma_waves(%x: tensor<32x32xf32, #ttg.amd_wmma<{version = 1, warpsPerCTA = [2, 1]}>>) {
  func.return
}
// CHECK: #ttg.amd_wmma: warpsPerCTA must be [1, w]
