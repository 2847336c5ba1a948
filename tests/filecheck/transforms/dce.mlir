// RUN: tile-opt -p dce %s --split-input-file | filecheck %s

// Unused pure ops go, including chains whose only users are dead.
// CHECK-LABEL: func.func @unused_pure_ops
// CHECK-NEXT:    func.return
func.func @unused_pure_ops(%n: i32) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %s = tt.splat %n : i32 -> tensor<128xi32>
  %a = arith.addi %s, %r : tensor<128xi32>
  %e = tt.expand_dims %a {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  func.return
}

// -----

// An unused load goes (it only reads memory); a store and what it uses stay.
// CHECK-LABEL: func.func @loads_and_stores
// CHECK-NEXT:    %used = tt.load %p : !tt.ptr<f32> -> f32
// CHECK-NEXT:    %twice = arith.addf %used, %used : f32
// CHECK-NEXT:    tt.store %q, %twice : !tt.ptr<f32>, f32
// CHECK-NEXT:    func.return
func.func @loads_and_stores(%p: !tt.ptr<f32>, %q: !tt.ptr<f32>) {
  %unused = tt.load %p : !tt.ptr<f32> -> f32
  %used = tt.load %p : !tt.ptr<f32> -> f32
  %twice = arith.addf %used, %used : f32
  tt.store %q, %twice : !tt.ptr<f32>, f32
  func.return
}

// -----

// A store inside a loop keeps the loop; dead ops inside the loop body still go.
// CHECK-LABEL: func.func @store_in_loop
// CHECK:         scf.for %i = %lb to %ub step %st : i32 {
// CHECK-NEXT:      %ps = tt.splat %p : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
// CHECK-NEXT:      %v = tt.splat %i : i32 -> tensor<8xi32>
// CHECK-NEXT:      tt.store %ps, %v : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
// CHECK-NEXT:    }
func.func @store_in_loop(%p: !tt.ptr<i32>, %lb: i32, %ub: i32, %st: i32) {
  scf.for %i = %lb to %ub step %st : i32 {
    %dead = arith.muli %i, %i : i32
    %ps = tt.splat %p : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %v = tt.splat %i : i32 -> tensor<8xi32>
    tt.store %ps, %v : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
  }
  func.return
}

// -----

// A loop computing an unused value without side effects goes entirely.
// CHECK-LABEL: func.func @dead_loop
// CHECK-NEXT:    func.return
func.func @dead_loop(%lb: i32, %ub: i32, %st: i32) {
  %r = scf.for %i = %lb to %ub step %st iter_args(%acc = %lb) -> (i32) : i32 {
    %next = arith.addi %acc, %i : i32
    scf.yield %next : i32
  }
  func.return
}

// -----

// A volatile load stays even when unused (Triton's rule: it may have effects beyond reading).
// CHECK-LABEL: func.func @volatile_load
// CHECK-NEXT:    %kept = tt.load %p {isVolatile = true} : !tt.ptr<f32> -> f32
// CHECK-NEXT:    func.return
func.func @volatile_load(%p: !tt.ptr<f32>) {
  %kept = tt.load %p {isVolatile = true} : !tt.ptr<f32> -> f32
  %gone = tt.load %p cacheModifier = cg : !tt.ptr<f32> -> f32
  func.return
}
