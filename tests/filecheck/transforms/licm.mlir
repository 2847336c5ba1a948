// RUN: tile-opt -p licm %s --split-input-file | filecheck %s

// Invariant pure ops leave the loop; ops on the induction variable stay.
// CHECK-LABEL: func.func @hoist_pure
// CHECK-NEXT:    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
// CHECK-NEXT:    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
// CHECK-NEXT:    %base = tt.addptr %ps, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
// CHECK-NEXT:    scf.for %i = %lb to %ub step %st : i32 {
// CHECK-NEXT:      %is = tt.splat %i : i32 -> tensor<64xi32>
// CHECK-NEXT:      %ptrs = tt.addptr %base, %is : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
// CHECK-NEXT:      tt.store %ptrs, %v : tensor<64x!tt.ptr<f32>>, tensor<64xf32>
// CHECK-NEXT:    }
func.func @hoist_pure(%p: !tt.ptr<f32>, %v: tensor<64xf32>, %lb: i32, %ub: i32, %st: i32) {
  scf.for %i = %lb to %ub step %st : i32 {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %base = tt.addptr %ps, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %is = tt.splat %i : i32 -> tensor<64xi32>
    %ptrs = tt.addptr %base, %is : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    tt.store %ptrs, %v : tensor<64x!tt.ptr<f32>>, tensor<64xf32>
  }
  func.return
}

// -----

// A load from a loop-invariant address stays in the loop (memory may change).
// CHECK-LABEL: func.func @load_not_hoisted
// CHECK-NEXT:    %r = scf.for %i = %lb to %ub step %st iter_args(%acc = %init) -> (f32) : i32 {
// CHECK-NEXT:      %x = tt.load %p : !tt.ptr<f32> -> f32
// CHECK-NEXT:      %next = arith.addf %acc, %x : f32
func.func @load_not_hoisted(%p: !tt.ptr<f32>, %init: f32, %lb: i32, %ub: i32, %st: i32) -> f32 {
  %r = scf.for %i = %lb to %ub step %st iter_args(%acc = %init) -> (f32) : i32 {
    %x = tt.load %p : !tt.ptr<f32> -> f32
    %next = arith.addf %acc, %x : f32
    scf.yield %next : f32
  }
  func.return %r : f32
}

// -----

// Division by a value that may be zero is not speculated out of the loop;
// division by a non-zero constant is.
// CHECK-LABEL: func.func @division
// CHECK-NEXT:    %c4 = arith.constant 4 : i32
// CHECK-NEXT:    %safe = arith.divsi %n, %c4 : i32
// CHECK-NEXT:    %r = scf.for
// CHECK-NEXT:      %unsafe = arith.divsi %n, %d : i32
func.func @division(%n: i32, %d: i32, %lb: i32, %ub: i32, %st: i32) -> i32 {
  %r = scf.for %i = %lb to %ub step %st iter_args(%acc = %lb) -> (i32) : i32 {
    %c4 = arith.constant 4 : i32
    %safe = arith.divsi %n, %c4 : i32
    %unsafe = arith.divsi %n, %d : i32
    %s = arith.addi %safe, %unsafe : i32
    %next = arith.addi %acc, %s : i32
    scf.yield %next : i32
  }
  func.return %r : i32
}

// -----

// An op invariant to two nested loops climbs out of both.
// CHECK-LABEL: func.func @nested
// CHECK-NEXT:    %s = tt.splat %n : i32 -> tensor<8xi32>
// CHECK-NEXT:    scf.for %i
// CHECK-NEXT:      scf.for %j
// CHECK-NEXT:        tt.store %q, %s : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
func.func @nested(%q: tensor<8x!tt.ptr<i32>>, %n: i32, %lb: i32, %ub: i32, %st: i32) {
  scf.for %i = %lb to %ub step %st : i32 {
    scf.for %j = %lb to %ub step %st : i32 {
      %s = tt.splat %n : i32 -> tensor<8xi32>
      tt.store %q, %s : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    }
  }
  func.return
}
