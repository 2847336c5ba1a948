// RUN: tile-opt %s | tile-opt | filecheck %s
// RUN: tile-opt %s -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32},cse' | filecheck %s --check-prefix=TTGIR
// RUN: tile-opt %s -p cse | filecheck %s --check-prefix=CSE
// tt.mulhiui (tl.umulhi): parses, prints back, is elementwise under convert-to-ttgir, and is pure.

// CHECK-LABEL: func.func @mulhi
// CHECK: %{{.*}} = tt.mulhiui %{{.*}}, %{{.*}} : tensor<128xi32>
// CHECK: %{{.*}} = tt.mulhiui %{{.*}}, %{{.*}} : i64
// TTGIR-LABEL: func.func @mulhi
// TTGIR: tt.mulhiui %{{.*}}, %{{.*}} : tensor<128xi32, #ttg.blocked<
// CSE-LABEL: func.func @mulhi
// CSE-COUNT-1: tt.mulhiui {{.*}} : tensor<128xi32>
// CSE-NOT: tt.mulhiui {{.*}} : tensor<128xi32>
func.func @mulhi(%p: !tt.ptr<i32>, %a: i64, %b: i64) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %h = tt.mulhiui %r, %r : tensor<128xi32>
  %again = tt.mulhiui %r, %r : tensor<128xi32>
  %s = tt.mulhiui %a, %b : i64
  %ps = tt.splat %p : !tt.ptr<i32> -> tensor<128x!tt.ptr<i32>>
  %pp = tt.addptr %ps, %r : tensor<128x!tt.ptr<i32>>, tensor<128xi32>
  %sum = arith.addi %h, %again : tensor<128xi32>
  tt.store %pp, %sum : tensor<128x!tt.ptr<i32>>, tensor<128xi32>
  func.return
}
