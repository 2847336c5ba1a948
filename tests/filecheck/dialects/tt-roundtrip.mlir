// RUN: tile-opt %s | tile-opt | filecheck %s
// Every tt op (and the tile-capable arith replacements) parses, verifies and prints back.

func.func public @all_ops(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) {
  %pid = tt.get_program_id {axis = 0 : i32} : i32
  %np = tt.get_num_programs {axis = 2 : i32} : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %s = tt.splat %n : i32 -> tensor<128xi32>
  %e = tt.expand_dims %r {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %b = tt.broadcast %e : tensor<1x128xi32> -> tensor<4x128xi32>
  %rs = tt.reshape %b : tensor<4x128xi32> -> tensor<512xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %p1 = tt.addptr %p, %n : !tt.ptr<f32>, i32
  %m = arith.cmpi slt, %r, %s : tensor<128xi32>
  %zero = arith.constant 0.000000e+00 : f32
  %z = tt.splat %zero : f32 -> tensor<128xf32>
  %v0 = tt.load %pp : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %v1 = tt.load %pp mask %m : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %v2 = tt.load %pp mask %m other %z : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %v3 = tt.load %p1 : !tt.ptr<f32> -> f32
  %sel = arith.select %m, %v1, %v2 : tensor<128xi1>, tensor<128xf32>
  %f = arith.cmpf olt, %v0, %sel : tensor<128xf32>
  %sum = tt.reduce %v0 {axis = 0 : i32, kind = "sum"} : tensor<128xf32> -> f32
  %rows = tt.reduce %b {axis = 1 : i32, kind = "max"} : tensor<4x128xi32> -> tensor<4xi32>
  %idx = tt.reduce %v2 {axis = 0 : i32, kind = "argmin"} : tensor<128xf32> -> i32
  %pi = tt.bitcast %p : !tt.ptr<f32> -> !tt.ptr<i32>
  %c0 = arith.constant 0 : i64
  %null = tt.int_to_ptr %c0 : i64 -> !tt.ptr<f16>
  %wide = arith.extsi %r : tensor<128xi32> to tensor<128xi64>
  %fl = arith.sitofp %r : tensor<128xi32> to tensor<128xf32>
  %rem = arith.remf %fl, %v0 : tensor<128xf32>
  tt.store %pp, %v2 mask %m : tensor<128x!tt.ptr<f32>>, tensor<128xf32>
  tt.store %pi, %idx {tt.note = 1 : i32} : !tt.ptr<i32>, i32
  func.return
}

// CHECK:      func.func public @all_ops(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) {
// CHECK-NEXT:   %pid = tt.get_program_id {axis = 0 : i32} : i32
// CHECK-NEXT:   %np = tt.get_num_programs {axis = 2 : i32} : i32
// CHECK-NEXT:   %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
// CHECK-NEXT:   %s = tt.splat %n : i32 -> tensor<128xi32>
// CHECK-NEXT:   %e = tt.expand_dims %r {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
// CHECK-NEXT:   %b = tt.broadcast %e : tensor<1x128xi32> -> tensor<4x128xi32>
// CHECK-NEXT:   %rs = tt.reshape %b : tensor<4x128xi32> -> tensor<512xi32>
// CHECK-NEXT:   %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
// CHECK-NEXT:   %pp = tt.addptr %ps, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
// CHECK-NEXT:   %p1 = tt.addptr %p, %n : !tt.ptr<f32>, i32
// CHECK-NEXT:   %m = arith.cmpi slt, %r, %s : tensor<128xi32>
// CHECK-NEXT:   %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %z = tt.splat %zero : f32 -> tensor<128xf32>
// CHECK-NEXT:   %v0 = tt.load %pp : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
// CHECK-NEXT:   %v1 = tt.load %pp mask %m : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
// CHECK-NEXT:   %v2 = tt.load %pp mask %m other %z : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
// CHECK-NEXT:   %v3 = tt.load %p1 : !tt.ptr<f32> -> f32
// CHECK-NEXT:   %sel = arith.select %m, %v1, %v2 : tensor<128xi1>, tensor<128xf32>
// CHECK-NEXT:   %f = arith.cmpf olt, %v0, %sel : tensor<128xf32>
// CHECK-NEXT:   %sum = tt.reduce %v0 {axis = 0 : i32, kind = "sum"} : tensor<128xf32> -> f32
// CHECK-NEXT:   %rows = tt.reduce %b {axis = 1 : i32, kind = "max"} : tensor<4x128xi32> -> tensor<4xi32>
// CHECK-NEXT:   %idx = tt.reduce %v2 {axis = 0 : i32, kind = "argmin"} : tensor<128xf32> -> i32
// CHECK-NEXT:   %pi = tt.bitcast %p : !tt.ptr<f32> -> !tt.ptr<i32>
// CHECK-NEXT:   %c0 = arith.constant 0 : i64
// CHECK-NEXT:   %null = tt.int_to_ptr %c0 : i64 -> !tt.ptr<f16>
// CHECK-NEXT:   %wide = arith.extsi %r : tensor<128xi32> to tensor<128xi64>
// CHECK-NEXT:   %fl = arith.sitofp %r : tensor<128xi32> to tensor<128xf32>
// CHECK-NEXT:   %rem = arith.remf %fl, %v0 : tensor<128xf32>
// CHECK-NEXT:   tt.store %pp, %v2 mask %m : tensor<128x!tt.ptr<f32>>, tensor<128xf32>
// CHECK-NEXT:   tt.store %pi, %idx {tt.note = 1 : i32} : !tt.ptr<i32>, i32
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
