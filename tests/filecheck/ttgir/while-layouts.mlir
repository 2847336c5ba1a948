// RUN: tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32}' %s | filecheck %s
// RUN: tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32},remove-layout-conversions' %s | filecheck %s --check-prefix=CLEAN

// A tensor carried through scf.while keeps its init's layout (here a reduction's slice) in both
// regions' arguments, the condition's forwarded value and the results; the body's value in the
// default layout is converted back before the yield.
// CHECK-LABEL: func.func @carried_slice
// CHECK:         %row = tt.reduce %m {axis = 1 : i32, kind = "sum"} : tensor<64x16xf32, {{.*}}> -> tensor<64xf32, [[S:#ttg.slice<.*>]]>
// CHECK:         %res = scf.while (%x = %row) : (tensor<64xf32, [[S]]>) -> tensor<64xf32, [[S]]> {
// CHECK:           scf.condition(%go) %x : tensor<64xf32, [[S]]>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%x1: tensor<64xf32, [[S]]>):
// CHECK:           %{{.*}} = ttg.convert_layout %x1 : tensor<64xf32, [[S]]> -> tensor<64xf32, [[D:#ttg.blocked<.*>]]>
// CHECK:           %y = arith.mulf %{{.*}}, %v : tensor<64xf32, [[D]]>
// CHECK-NEXT:      %[[BACK:.*]] = ttg.convert_layout %y : tensor<64xf32, [[D]]> -> tensor<64xf32, [[S]]>
// CHECK-NEXT:      scf.yield %[[BACK]] : tensor<64xf32, [[S]]>
// CHECK:         %s = tt.reduce %res {axis = 0 : i32, kind = "sum"} : tensor<64xf32, [[S]]> -> f32

// remove-layout-conversions moves the body into the carried layout: no conversion in the loop.
// CLEAN-LABEL: func.func @carried_slice
// CLEAN:         %res = scf.while (%x = %row) : (tensor<64xf32, [[S:#ttg.slice<.*>]]>) -> tensor<64xf32, [[S]]> {
// CLEAN-NOT:       ttg.convert_layout
// CLEAN:           %y = arith.mulf %x1, %v : tensor<64xf32, [[S]]>
// CLEAN-NEXT:      scf.yield %y : tensor<64xf32, [[S]]>
func.func @carried_slice(%p: !tt.ptr<f32>, %lim: f32) -> f32 {
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %r2 = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %rb = tt.broadcast %r2 : tensor<64x1xi32> -> tensor<64x16xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x16x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %rb : tensor<64x16x!tt.ptr<f32>>, tensor<64x16xi32>
  %m = tt.load %ptrs : tensor<64x16x!tt.ptr<f32>> -> tensor<64x16xf32>
  %row = tt.reduce %m {axis = 1 : i32, kind = "sum"} : tensor<64x16xf32> -> tensor<64xf32>
  %p1 = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %p2 = tt.addptr %p1, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %res = scf.while (%x = %row) : (tensor<64xf32>) -> (tensor<64xf32>) {
    %mx = tt.reduce %x {axis = 0 : i32, kind = "max"} : tensor<64xf32> -> f32
    %go = arith.cmpf oge, %mx, %lim : f32
    scf.condition(%go) %x : tensor<64xf32>
  } do {
  ^bb0(%x1: tensor<64xf32>):
    %v = tt.load %p2 : tensor<64x!tt.ptr<f32>> -> tensor<64xf32>
    %y = arith.mulf %x1, %v : tensor<64xf32>
    scf.yield %y : tensor<64xf32>
  }
  %s = tt.reduce %res {axis = 0 : i32, kind = "sum"} : tensor<64xf32> -> f32
  func.return %s : f32
}
