// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s
// The element-moving ops check their shapes.

// CHECK: tt.trans: order [0, 0] is not a permutation
func.func @not_a_permutation(%x: tensor<16x32xf32>) {
  %t = tt.trans %x {order = array<i32: 0, 0>} : tensor<16x32xf32> -> tensor<16x16xf32>
  func.return
}

// -----

// CHECK: tt.join: result shape must be the operands' + [2]
func.func @join_shape(%x: tensor<16xf32>) {
  %j = tt.join %x, %x : tensor<16xf32>, tensor<16xf32> -> tensor<2x16xf32>
  func.return
}

// -----

// CHECK: tt.split: the operand's last dim must be 2
func.func @split_shape(%x: tensor<16x4xf32>) {
  %a, %b = tt.split %x : tensor<16x4xf32> -> tensor<16xf32>, tensor<16xf32>
  func.return
}
