// RUN: tile-opt %s | tile-opt | filecheck %s
// RUN: tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32}' %s | filecheck %s --check-prefix=GPU
// The element-moving ops parse, verify and print back; in TTGIR each result gets a
// layout of its own (the lowering moves the data) and no conversion is inserted.
// (The function arguments stand for values computed in the kernel: they keep no layout.)

// CHECK-LABEL: func.func @moves
// CHECK:         %t = tt.trans %x {order = array<i32: 1, 0>} : tensor<16x32xf32> -> tensor<32x16xf32>
// CHECK-NEXT:    %f = tt.flip %x {axis = 1 : i32} : tensor<16x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT:    %j = tt.join %x, %f : tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x32x2xf32>
// CHECK-NEXT:    %lo, %hi = tt.split %j : tensor<16x32x2xf32> -> tensor<16x32xf32>, tensor<16x32xf32>
// CHECK-NEXT:    %s = tt.sort %x {axis = 1 : i32, descending = false, unsigned = false} : tensor<16x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT:    %g = tt.gather %x[%i] {axis = 0 : i32} : tensor<16x32xf32>, tensor<4x32xi32> -> tensor<4x32xf32>
// CHECK-NEXT:    tt.debug_barrier
// GPU-LABEL:   func.func @moves
// GPU-NOT:       ttg.convert_layout
// GPU:           %t = tt.trans %x {order = array<i32: 1, 0>} : tensor<16x32xf32> -> tensor<32x16xf32, #ttg.blocked<{{.*}}>>
// GPU:           %lo, %hi = tt.split %j : tensor<16x32x2xf32, #ttg.blocked<{{.*}}>> -> tensor<16x32xf32, #ttg.blocked<{{.*}}>>, tensor<16x32xf32, #ttg.blocked<{{.*}}>>
// GPU-NOT:       ttg.convert_layout
func.func @moves(%x: tensor<16x32xf32>, %i: tensor<4x32xi32>) {
  %t = tt.trans %x {order = array<i32: 1, 0>} : tensor<16x32xf32> -> tensor<32x16xf32>
  %f = tt.flip %x {axis = 1 : i32} : tensor<16x32xf32> -> tensor<16x32xf32>
  %j = tt.join %x, %f : tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x32x2xf32>
  %lo, %hi = tt.split %j : tensor<16x32x2xf32> -> tensor<16x32xf32>, tensor<16x32xf32>
  %s = tt.sort %x {axis = 1 : i32, descending = false, unsigned = false} : tensor<16x32xf32> -> tensor<16x32xf32>
  %g = tt.gather %x[%i] {axis = 0 : i32} : tensor<16x32xf32>, tensor<4x32xi32> -> tensor<4x32xf32>
  tt.debug_barrier
  func.return
}
