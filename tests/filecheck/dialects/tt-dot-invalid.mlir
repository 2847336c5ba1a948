// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Verifier errors of tt.dot, one case per chunk.

func.func @inner_dims(%a: tensor<32x16xf16>, %b: tensor<32x64xf16>, %c: tensor<32x64xf32>) {
  %d = tt.dot %a, %b, %c {input_precision = "tf32"} : tensor<32x16xf16>, tensor<32x64xf16>, tensor<32x64xf32> -> tensor<32x64xf32>
  func.return
}
// CHECK: tt.dot: the inner dimensions differ ([32, 16] @ [32, 64])

// -----

func.func @element_types(%a: tensor<32x16xf16>, %b: tensor<16x64xbf16>, %c: tensor<32x64xf32>) {
  %d = tt.dot %a, %b, %c {input_precision = "tf32"} : tensor<32x16xf16>, tensor<16x64xbf16>, tensor<32x64xf32> -> tensor<32x64xf32>
  func.return
}
// CHECK: tt.dot: the operands' element types differ

// -----

func.func @accumulator(%a: tensor<32x16xf16>, %b: tensor<16x64xf16>, %c: tensor<32x64xf16>) {
  %d = tt.dot %a, %b, %c {input_precision = "tf32"} : tensor<32x16xf16>, tensor<16x64xf16>, tensor<32x64xf16> -> tensor<32x64xf32>
  func.return
}
// CHECK: tt.dot: the accumulator must have the result's type

// -----

func.func @precision(%a: tensor<32x16xf32>, %b: tensor<16x64xf32>, %c: tensor<32x64xf32>) {
  %d = tt.dot %a, %b, %c {input_precision = "bf16"} : tensor<32x16xf32>, tensor<16x64xf32>, tensor<32x64xf32> -> tensor<32x64xf32>
  func.return
}
// CHECK: tt.dot: input_precision must be one of tf32, tf32x3, ieee
