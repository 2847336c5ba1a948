// RUN: tile-opt %s | tile-opt | filecheck %s
// RUN: tile-opt -p cse,dce %s | filecheck %s --check-prefix=CSE
// tt.elementwise_inline_asm parses, verifies and prints back (one or several results, no operand);
// cse merges and dce drops only the pure ones (its layouts: ttgir/inline-asm-layouts.mlir).

// CHECK-LABEL: func.func @forms
// CHECK:         %a = tt.elementwise_inline_asm "shl.b32 $0, $1, 3;" {constraints = "=r,r", packed_element = 1 : i32, pure = true} %x : tensor<16xi32> -> tensor<16xi32>
// CHECK-NEXT:    %b, %c = tt.elementwise_inline_asm "{ add.s32 $0, $2, $3; sub.f32 $1, $3, $2; }" {constraints = "=r,=f,r,r", packed_element = 1 : i32, pure = false} %x, %a : tensor<16xi32>, tensor<16xi32> -> tensor<16xi32>, tensor<16xf32>
// CHECK-NEXT:    %t = tt.elementwise_inline_asm "mov.u32 $0, %clock;" {constraints = "=r", packed_element = 1 : i32, pure = false} -> i32
// CHECK-NEXT:    %p = tt.elementwise_inline_asm "prmt.b32 $0, $1, 0, 0x0123;" {constraints = "=r,r", packed_element = 4 : i32, pure = true} %y : tensor<16xi8> -> tensor<16xi8>
func.func @forms(%x: tensor<16xi32>, %y: tensor<16xi8>) {
  %a = tt.elementwise_inline_asm "shl.b32 $0, $1, 3;" {constraints = "=r,r", packed_element = 1 : i32, pure = true} %x : tensor<16xi32> -> tensor<16xi32>
  %b, %c = tt.elementwise_inline_asm "{ add.s32 $0, $2, $3; sub.f32 $1, $3, $2; }" {constraints = "=r,=f,r,r", packed_element = 1 : i32, pure = false} %x, %a : tensor<16xi32>, tensor<16xi32> -> tensor<16xi32>, tensor<16xf32>
  %t = tt.elementwise_inline_asm "mov.u32 $0, %clock;" {constraints = "=r", packed_element = 1 : i32, pure = false} -> i32
  %p = tt.elementwise_inline_asm "prmt.b32 $0, $1, 0, 0x0123;" {constraints = "=r,r", packed_element = 4 : i32, pure = true} %y : tensor<16xi8> -> tensor<16xi8>
  func.return
}

// CSE-LABEL: func.func @purity
// CSE-NEXT:    %a = tt.elementwise_inline_asm "shl.b32 $0, $1, 3;" {{.*}}pure = true}
// CSE-NEXT:    %c = tt.elementwise_inline_asm "shl.b32 $0, $1, 5;" {{.*}}pure = false}
// CSE-NEXT:    %d = tt.elementwise_inline_asm "shl.b32 $0, $1, 5;" {{.*}}pure = false}
// CSE-NEXT:    %unused = tt.elementwise_inline_asm "shl.b32 $0, $1, 6;" {{.*}}pure = false}
// CSE-NEXT:    func.return %a, %a, %c, %d
func.func @purity(%x: tensor<16xi32>) -> (tensor<16xi32>, tensor<16xi32>, tensor<16xi32>, tensor<16xi32>) {
  %a = tt.elementwise_inline_asm "shl.b32 $0, $1, 3;" {constraints = "=r,r", packed_element = 1 : i32, pure = true} %x : tensor<16xi32> -> tensor<16xi32>
  %b = tt.elementwise_inline_asm "shl.b32 $0, $1, 3;" {constraints = "=r,r", packed_element = 1 : i32, pure = true} %x : tensor<16xi32> -> tensor<16xi32>
  %dead = tt.elementwise_inline_asm "shl.b32 $0, $1, 4;" {constraints = "=r,r", packed_element = 1 : i32, pure = true} %x : tensor<16xi32> -> tensor<16xi32>
  %c = tt.elementwise_inline_asm "shl.b32 $0, $1, 5;" {constraints = "=r,r", packed_element = 1 : i32, pure = false} %x : tensor<16xi32> -> tensor<16xi32>
  %d = tt.elementwise_inline_asm "shl.b32 $0, $1, 5;" {constraints = "=r,r", packed_element = 1 : i32, pure = false} %x : tensor<16xi32> -> tensor<16xi32>
  %unused = tt.elementwise_inline_asm "shl.b32 $0, $1, 6;" {constraints = "=r,r", packed_element = 1 : i32, pure = false} %x : tensor<16xi32> -> tensor<16xi32>
  func.return %a, %b, %c, %d : tensor<16xi32>, tensor<16xi32>, tensor<16xi32>, tensor<16xi32>
}
