// RUN: tile-opt %s --split-input-file | tile-opt --split-input-file | filecheck %s --check-prefix=ROUNDTRIP
// RUN: tile-opt -p canonicalize,cse,licm,dce %s --split-input-file | filecheck %s --check-prefix=OPT
// RUN: tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32},coalesce' %s --split-input-file | filecheck %s --check-prefix=TTGIR
// Atomics (tt.atomic_rmw, tt.atomic_cas): they print and parse back; they read and write memory,
// so no pass removes an unused one, merges two identical ones or hoists one out of a loop;
// coalescing gives them one element per thread and converts their old values back.

// ROUNDTRIP-LABEL: func.func @forms
// ROUNDTRIP:         %a = tt.atomic_rmw fadd, acq_rel, gpu, %ptrs, %v mask %m : tensor<64x!tt.ptr<f32>>, tensor<64xf32>
// ROUNDTRIP-NEXT:    %b = tt.atomic_rmw umax, relaxed, cta, %q, %i : !tt.ptr<i32>, i32
// ROUNDTRIP-NEXT:    %c = tt.atomic_cas acquire, sys, %q, %i, %i : !tt.ptr<i32>, i32
// OPT-LABEL:     func.func @forms
// OPT:               %a = tt.atomic_rmw fadd
// OPT-NEXT:          %b = tt.atomic_rmw umax
// OPT-NEXT:          %c = tt.atomic_cas
// OPT-NEXT:          func.return
func.func @forms(%p: !tt.ptr<f32>, %q: !tt.ptr<i32>, %v: tensor<64xf32>, %m: tensor<64xi1>, %i: i32) {
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %a = tt.atomic_rmw fadd, acq_rel, gpu, %ptrs, %v mask %m : tensor<64x!tt.ptr<f32>>, tensor<64xf32>
  %b = tt.atomic_rmw umax, relaxed, cta, %q, %i : !tt.ptr<i32>, i32
  %c = tt.atomic_cas acquire, sys, %q, %i, %i : !tt.ptr<i32>, i32
  func.return
}

// -----

// Two identical atomics are two updates; one in a loop runs on every iteration.
// OPT-LABEL: func.func @not_merged_not_hoisted
// OPT-NEXT:    %one = arith.constant 1 : i32
// OPT-NEXT:    %first = tt.atomic_rmw add, acq_rel, gpu, %q, %one : !tt.ptr<i32>, i32
// OPT-NEXT:    %second = tt.atomic_rmw add, acq_rel, gpu, %q, %one : !tt.ptr<i32>, i32
// OPT-NEXT:    scf.for %k = %lb to %ub step %st : i32 {
// OPT-NEXT:      %in_loop = tt.atomic_rmw add, acq_rel, gpu, %q, %one : !tt.ptr<i32>, i32
// OPT-NEXT:    }
// OPT-NEXT:    func.return %first, %second
func.func @not_merged_not_hoisted(%q: !tt.ptr<i32>, %lb: i32, %ub: i32, %st: i32) -> (i32, i32) {
  %one = arith.constant 1 : i32
  %first = tt.atomic_rmw add, acq_rel, gpu, %q, %one : !tt.ptr<i32>, i32
  %second = tt.atomic_rmw add, acq_rel, gpu, %q, %one : !tt.ptr<i32>, i32
  scf.for %k = %lb to %ub step %st : i32 {
    %in_loop = tt.atomic_rmw add, acq_rel, gpu, %q, %one : !tt.ptr<i32>, i32
  }
  func.return %first, %second : i32, i32
}

// -----

// A [64, 16] tile contiguous along dim 0 (column-major): the atomic takes one element per thread
// with lanes along dim 0 (order [0, 1]); its operands are converted to that layout and its old
// values back to the row-major layout of their user.
// TTGIR-LABEL: func.func @coalesced
// TTGIR:         %[[PTRS:[0-9]+]] = ttg.convert_layout %ptrs : tensor<64x16x!tt.ptr<f32>, [[D:#ttg.blocked<\{[^}]*order = .1, 0.\}>]]> -> tensor<64x16x!tt.ptr<f32>, [[COL:#ttg.blocked<\{sizePerThread = .1, 1., threadsPerWarp = .32, 1., warpsPerCTA = .2, 2., order = .0, 1.\}>]]>
// TTGIR-NEXT:    %[[V:[0-9]+]] = ttg.convert_layout %v : tensor<64x16xf32, [[D]]> -> tensor<64x16xf32, [[COL]]>
// TTGIR-NEXT:    %old = tt.atomic_rmw fadd, acq_rel, gpu, %[[PTRS]], %[[V]] : tensor<64x16x!tt.ptr<f32>, [[COL]]>, tensor<64x16xf32, [[COL]]>
// TTGIR-NEXT:    %old_1 = ttg.convert_layout %old : tensor<64x16xf32, [[COL]]> -> tensor<64x16xf32, [[D]]>
func.func @coalesced(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %q: !tt.ptr<f32>) {
  %r0 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %r1 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %e0 = tt.expand_dims %r0 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %e1 = tt.expand_dims %r1 {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %c64 = arith.constant 64 : i32
  %s64 = tt.splat %c64 : i32 -> tensor<1x16xi32>
  %cols = arith.muli %e1, %s64 : tensor<1x16xi32>
  %b0 = tt.broadcast %e0 : tensor<64x1xi32> -> tensor<64x16xi32>
  %b1 = tt.broadcast %cols : tensor<1x16xi32> -> tensor<64x16xi32>
  %offs = arith.addi %b0, %b1 : tensor<64x16xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x16x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %offs : tensor<64x16x!tt.ptr<f32>>, tensor<64x16xi32>
  %one = arith.constant 1.0 : f32
  %v = tt.splat %one : f32 -> tensor<64x16xf32>
  %old = tt.atomic_rmw fadd, acq_rel, gpu, %ptrs, %v : tensor<64x16x!tt.ptr<f32>>, tensor<64x16xf32>
  %r2 = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %flat = tt.reshape %old : tensor<64x16xf32> -> tensor<1024xf32>
  %qs = tt.splat %q : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %qptrs = tt.addptr %qs, %r2 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  tt.store %qptrs, %flat : tensor<1024x!tt.ptr<f32>>, tensor<1024xf32>
  func.return
}
