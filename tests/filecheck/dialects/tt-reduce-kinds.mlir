// RUN: tile-opt %s | tile-opt | filecheck %s
// RUN: tile-opt %s -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32}' | filecheck %s --check-prefix=TTGIR
// The prod and xor_sum kinds of tt.reduce parse, print back and keep their kind in TTGIR.

// CHECK-LABEL: func.func @kinds
// CHECK: tt.reduce %{{.*}} {axis = 1 : i32, kind = "prod"} : tensor<4x128xf32> -> tensor<4xf32>
// CHECK: tt.reduce %{{.*}} {axis = 0 : i32, kind = "xor_sum"} : tensor<128xi32> -> i32
// TTGIR: tt.reduce %{{.*}} {axis = 1 : i32, kind = "prod"} : tensor<4x128xf32, #[[L:.*]]> -> tensor<4xf32, #ttg.slice<{dim = 1, parent = #[[L]]}>>
// TTGIR: tt.reduce %{{.*}} {axis = 0 : i32, kind = "xor_sum"} : tensor<128xi32, #{{.*}}> -> i32
func.func @kinds() {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %e = tt.expand_dims %r {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %b = tt.broadcast %e : tensor<1x128xi32> -> tensor<4x128xi32>
  %x = arith.sitofp %b : tensor<4x128xi32> to tensor<4x128xf32>
  %p = tt.reduce %x {axis = 1 : i32, kind = "prod"} : tensor<4x128xf32> -> tensor<4xf32>
  %s = tt.reduce %r {axis = 0 : i32, kind = "xor_sum"} : tensor<128xi32> -> i32
  func.return
}
