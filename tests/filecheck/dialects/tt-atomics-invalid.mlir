// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Malformed atomics are rejected by their verifiers with a message naming the problem.

// CHECK: error: tt.atomic_rmw: unknown kind 'fmul'
func.func @bad_kind(%q: !tt.ptr<f32>, %v: f32) {
  %a = tt.atomic_rmw fmul, acq_rel, gpu, %q, %v : !tt.ptr<f32>, f32
  func.return
}

// -----

// CHECK: error: tt.atomic_rmw: value type must match the pointee type
func.func @bad_value(%q: !tt.ptr<f32>, %v: i32) {
  %a = tt.atomic_rmw add, acq_rel, gpu, %q, %v : !tt.ptr<f32>, i32
  func.return
}

// -----

// CHECK: error: tt.atomic_cas: unknown memory ordering 'seq_cst'
func.func @bad_ordering(%q: !tt.ptr<i32>, %v: i32) {
  %a = tt.atomic_cas seq_cst, gpu, %q, %v, %v : !tt.ptr<i32>, i32
  func.return
}
