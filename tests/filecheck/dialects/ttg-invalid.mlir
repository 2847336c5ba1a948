// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Verifier errors of TTGIR: ttg.convert_layout, and layouts that tt ops require.

#a = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
func.func @convert_shape(%x: tensor<128xf32, #a>) {
  %y = ttg.convert_layout %x : tensor<128xf32, #a> -> tensor<64xf32, #a>
  func.return
}
// CHECK: ttg.convert_layout: operand and result shapes differ

// -----

#a = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
func.func @convert_element(%x: tensor<128xf32, #a>) {
  %y = ttg.convert_layout %x : tensor<128xf32, #a> -> tensor<128xf16, #a>
  func.return
}
// CHECK: ttg.convert_layout: operand and result element types differ

// -----

#a = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
func.func @expand_dims_not_a_slice(%x: tensor<128xf32, #b>) {
  %y = tt.expand_dims %x {axis = 0 : i32} : tensor<128xf32, #b> -> tensor<1x128xf32, #a>
  func.return
}
// CHECK: tt.expand_dims: operand layout must be the result's layout sliced at dim 0

// -----

#a = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
func.func @reduce_wrong_slice(%x: tensor<4x128xf32, #a>) {
  %y = tt.reduce %x {axis = 1 : i32, kind = "sum"} : tensor<4x128xf32, #a> -> tensor<4xf32, #ttg.slice<{dim = 0, parent = #a}>>
  func.return
}
// CHECK: tt.reduce: result layout must be the operand's layout sliced at dim 1

// -----

#a = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
func.func @broadcast_layouts(%x: tensor<1x128xf32, #a>) {
  %y = tt.broadcast %x : tensor<1x128xf32, #a> -> tensor<4x128xf32, #b>
  func.return
}
// CHECK: tt.broadcast: operand and result layouts differ

// -----

#a = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#b = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
func.func @addptr_layouts(%p: tensor<128x!tt.ptr<f32>, #a>, %o: tensor<128xi32, #b>) {
  %q = tt.addptr %p, %o : tensor<128x!tt.ptr<f32>, #a>, tensor<128xi32, #b>
  func.return
}
// CHECK: tt.addptr: pointer and offset layouts differ

// -----

#a = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#b = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
func.func @load_result_layout(%p: tensor<128x!tt.ptr<f32>, #a>) {
  %x = tt.load %p : tensor<128x!tt.ptr<f32>, #a> -> tensor<128xf32, #b>
  func.return
}
// CHECK: tt.load: result type must match the pointee type
