// RUN: tile-opt -p licm %s | filecheck %s --check-prefix=LICM
// RUN: tile-opt -p canonicalize,cse,dce %s | filecheck %s --check-prefix=CLEAN

// scf.while survives the cleanup passes with its carried values; licm hoists invariant pure
// ops out of both regions (condition and body), loads and the carried arithmetic stay.
// LICM-LABEL: func.func @while_loop
// LICM:         %lim = arith.muli %n, %two : i32
// LICM:         %hs = tt.splat %h : f32 -> tensor<64xf32>
// LICM:         %hs2 = tt.splat %h : f32 -> tensor<64xf32>
// LICM:         %r, %r_1 = scf.while (%x = %x0, %i = %c0) : (tensor<64xf32>, i32) -> (tensor<64xf32>, i32) {
// LICM-NEXT:      %go = arith.cmpi slt, %i, %lim : i32
// LICM-NEXT:      scf.condition(%go) %x, %i : tensor<64xf32>, i32
// LICM-NEXT:    } do {
// LICM-NEXT:    ^bb0(%x1: tensor<64xf32>, %i1: i32):
// LICM-NEXT:      %v = tt.load %p : tensor<64x!tt.ptr<f32>> -> tensor<64xf32>
// LICM-NEXT:      %y0 = arith.mulf %x1, %hs : tensor<64xf32>
// LICM-NEXT:      %y = arith.mulf %y0, %hs2 : tensor<64xf32>
// LICM-NEXT:      %z = arith.addf %y, %v : tensor<64xf32>
// LICM-NEXT:      %next = arith.addi %i1, %one : i32
// LICM-NEXT:      scf.yield %z, %next : tensor<64xf32>, i32
// LICM-NEXT:    }

// CLEAN-LABEL: func.func @while_loop
// CLEAN:         scf.while (%x = %x0, %i = %c0) : (tensor<64xf32>, i32) -> (tensor<64xf32>, i32) {
// CLEAN-NOT:       %dead
// CLEAN:           scf.condition(%go) %x, %i : tensor<64xf32>, i32
// CLEAN:         } do {
// CLEAN:           %hs = tt.splat %h : f32 -> tensor<64xf32>
// CLEAN-NOT:       tt.splat
// CLEAN:           %y0 = arith.mulf %x1, %hs : tensor<64xf32>
// CLEAN-NEXT:      %y = arith.mulf %y0, %hs : tensor<64xf32>
// CLEAN:           %z = arith.addf %y, %v : tensor<64xf32>
// CLEAN:           scf.yield %z, %next : tensor<64xf32>, i32
// CLEAN:         func.return %r, %r_1 : tensor<64xf32>, i32
func.func @while_loop(%p: tensor<64x!tt.ptr<f32>>, %n: i32, %x0: tensor<64xf32>) -> (tensor<64xf32>, i32) {
  %c0 = arith.constant 0 : i32
  %r:2 = scf.while (%x = %x0, %i = %c0) : (tensor<64xf32>, i32) -> (tensor<64xf32>, i32) {
    %two = arith.constant 2 : i32
    %lim = arith.muli %n, %two : i32
    %dead = arith.addi %i, %two : i32
    %go = arith.cmpi slt, %i, %lim : i32
    scf.condition(%go) %x, %i : tensor<64xf32>, i32
  } do {
  ^bb0(%x1: tensor<64xf32>, %i1: i32):
    %h = arith.constant 5.000000e-01 : f32
    %hs = tt.splat %h : f32 -> tensor<64xf32>
    %v = tt.load %p : tensor<64x!tt.ptr<f32>> -> tensor<64xf32>
    %hs2 = tt.splat %h : f32 -> tensor<64xf32>
    %y0 = arith.mulf %x1, %hs : tensor<64xf32>
    %y = arith.mulf %y0, %hs2 : tensor<64xf32>
    %z = arith.addf %y, %v : tensor<64xf32>
    %one = arith.constant 1 : i32
    %next = arith.addi %i1, %one : i32
    scf.yield %z, %next : tensor<64xf32>, i32
  }
  func.return %r#0, %r#1 : tensor<64xf32>, i32
}
