// RUN: tile-opt -p cse %s --split-input-file | filecheck %s

// Identical pure ops (splat, make_range, arith, addptr) are merged.
// CHECK-LABEL: func.func @pure_ops_merge
// CHECK-NEXT:    %r1 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
// CHECK-NEXT:    %s1 = tt.splat %n : i32 -> tensor<128xi32>
// CHECK-NEXT:    %a1 = arith.addi %s1, %r1 : tensor<128xi32>
// CHECK-NEXT:    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
// CHECK-NEXT:    %q1 = tt.addptr %ps, %a1 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
// CHECK-NEXT:    func.return %q1, %q1
func.func @pure_ops_merge(%p: !tt.ptr<f32>, %n: i32) -> (tensor<128x!tt.ptr<f32>>, tensor<128x!tt.ptr<f32>>) {
  %r1 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %s1 = tt.splat %n : i32 -> tensor<128xi32>
  %a1 = arith.addi %s1, %r1 : tensor<128xi32>
  %r2 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %s2 = tt.splat %n : i32 -> tensor<128xi32>
  %a2 = arith.addi %s2, %r2 : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %q1 = tt.addptr %ps, %a1 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %q2 = tt.addptr %ps, %a2 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  func.return %q1, %q2 : tensor<128x!tt.ptr<f32>>, tensor<128x!tt.ptr<f32>>
}

// -----

// Two identical loads are not merged, even with no store in between.
// CHECK-LABEL: func.func @loads_not_merged
// CHECK-NEXT:    %a = tt.load %p : !tt.ptr<f32> -> f32
// CHECK-NEXT:    %b = tt.load %p : !tt.ptr<f32> -> f32
// CHECK-NEXT:    func.return %a, %b
func.func @loads_not_merged(%p: !tt.ptr<f32>) -> (f32, f32) {
  %a = tt.load %p : !tt.ptr<f32> -> f32
  %b = tt.load %p : !tt.ptr<f32> -> f32
  func.return %a, %b : f32, f32
}

// -----

// Identical stores both stay.
// CHECK-LABEL: func.func @stores_not_merged
// CHECK-NEXT:    tt.store %p, %v : !tt.ptr<f32>, f32
// CHECK-NEXT:    tt.store %p, %v : !tt.ptr<f32>, f32
func.func @stores_not_merged(%p: !tt.ptr<f32>, %v: f32) {
  tt.store %p, %v : !tt.ptr<f32>, f32
  tt.store %p, %v : !tt.ptr<f32>, f32
  func.return
}

// -----

// Ops that differ in an attribute are different: sum vs max reductions.
// CHECK-LABEL: func.func @different_attributes
// CHECK-NEXT:    %s = tt.reduce %x {axis = 0 : i32, kind = "sum"} : tensor<8xf32> -> f32
// CHECK-NEXT:    %m = tt.reduce %x {axis = 0 : i32, kind = "max"} : tensor<8xf32> -> f32
// CHECK-NEXT:    func.return %s, %m, %s
func.func @different_attributes(%x: tensor<8xf32>) -> (f32, f32, f32) {
  %s = tt.reduce %x {axis = 0 : i32, kind = "sum"} : tensor<8xf32> -> f32
  %m = tt.reduce %x {axis = 0 : i32, kind = "max"} : tensor<8xf32> -> f32
  %s2 = tt.reduce %x {axis = 0 : i32, kind = "sum"} : tensor<8xf32> -> f32
  func.return %s, %m, %s2 : f32, f32, f32
}

// -----

// A loop body reuses an identical value computed before the loop.
// CHECK-LABEL: func.func @reuse_in_loop
// CHECK:         %outer = tt.splat %n : i32 -> tensor<8xi32>
// CHECK:         scf.for
// CHECK-NOT:       tt.splat
// CHECK:           arith.addi %acc, %outer : tensor<8xi32>
func.func @reuse_in_loop(%n: i32, %lb: i32, %ub: i32) -> tensor<8xi32> {
  %outer = tt.splat %n : i32 -> tensor<8xi32>
  %r = scf.for %i = %lb to %ub step %n iter_args(%acc = %outer) -> (tensor<8xi32>) : i32 {
    %inner = tt.splat %n : i32 -> tensor<8xi32>
    %next = arith.addi %acc, %inner : tensor<8xi32>
    scf.yield %next : tensor<8xi32>
  }
  func.return %r : tensor<8xi32>
}
