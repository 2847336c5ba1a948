// RUN: tile-opt %s --verify-diagnostics | filecheck %s
// tt.mulhiui multiplies integers only.

func.func @mulhi_of_floats(%x: tensor<128xf32>) {
  %h = tt.mulhiui %x, %x : tensor<128xf32>
  func.return
}
// CHECK: tt.mulhiui: operands must be integers
