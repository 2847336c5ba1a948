// RUN: tile-opt -p test-print-axis-info %s | filecheck %s

// A pointer tensor carried through scf.while and advanced by a multiple of 16 bytes keeps its
// init's contiguity and alignment in the condition region, the body and the result (fixpoint
// as for scf.for); a counter that starts at 0 and adds 2 is known nothing about; what the
// condition forwards is what the body and the result see.
// CHECK-LABEL: func.func @carried_through_while
// CHECK: %cp = tt.addptr %q, %s128 {tt.axis_info = "contiguity = [128], divisibility = [16], constancy = [1]"
// CHECK: %k1 = arith.addi %kk, %c1 {tt.axis_info = "contiguity = [1], divisibility = [1], constancy = [1]"
// CHECK: %bp = tt.addptr %q1, %s128 {tt.axis_info = "contiguity = [128], divisibility = [16], constancy = [1]"
// CHECK: %out = tt.addptr %res, %s128 {tt.axis_info = "contiguity = [128], divisibility = [16], constancy = [1]"
func.func @carried_through_while(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c128 = arith.constant 128 : i32
  %s128 = tt.splat %c128 : i32 -> tensor<128xi32>
  %res, %kres = scf.while (%q = %ptrs, %k = %c0) : (tensor<128x!tt.ptr<f32>>, i32) -> (tensor<128x!tt.ptr<f32>>, i32) {
    %cp = tt.addptr %q, %s128 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %go = arith.cmpi slt, %k, %n : i32
    scf.condition(%go) %q, %k : tensor<128x!tt.ptr<f32>>, i32
  } do {
  ^bb0(%q1: tensor<128x!tt.ptr<f32>>, %k0: i32):
    %x = tt.load %q1 : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
    tt.store %q1, %x : tensor<128x!tt.ptr<f32>>, tensor<128xf32>
    %kk = arith.addi %k0, %c1 : i32
    %k1 = arith.addi %kk, %c1 : i32
    %bp = tt.addptr %q1, %s128 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    scf.yield %bp, %k1 : tensor<128x!tt.ptr<f32>>, i32
  }
  %out = tt.addptr %res, %s128 : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  func.return
}
