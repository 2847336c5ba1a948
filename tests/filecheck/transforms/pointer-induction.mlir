// RUN: tile-opt -p 'pointer-induction,dce' %s --split-input-file | filecheck %s
// pointer-induction: in a loop of dots, a pointer tile advanced by a loop-invariant offset each
// iteration is rebuilt from the loop index, p0 + ((i - lb) / step) * d; the loop-carried value
// goes away when nothing uses the loop's final pointers.

// CHECK-LABEL: func.func @stepped
// CHECK:       %acc = scf.for %i = %c0 to %n step %c1 iter_args(%acc_i = %acc0) -> (tensor<16x16xf32>) : i32 {
// CHECK-NEXT:    %[[K:.*]] = tt.splat %i : i32 -> tensor<16x16xi32>
// CHECK-NEXT:    %[[OFF:.*]] = arith.muli %[[K]], %step : tensor<16x16xi32>
// CHECK-NEXT:    %[[P:.*]] = tt.addptr %p0, %[[OFF]] : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
// CHECK-NEXT:    %a = tt.load %[[P]]
// CHECK-NEXT:    %d = tt.dot %a, %a, %acc_i
// CHECK-NEXT:    scf.yield %d : tensor<16x16xf32>
func.func @stepped(%pa: !tt.ptr<f16>, %pc: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %r16 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %row = tt.expand_dims %r16 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %col = tt.expand_dims %r16 {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %rowb = tt.broadcast %row : tensor<16x1xi32> -> tensor<16x16xi32>
  %colb = tt.broadcast %col : tensor<1x16xi32> -> tensor<16x16xi32>
  %c16s = tt.splat %c16 : i32 -> tensor<16x16xi32>
  %rowoff = arith.muli %rowb, %c16s : tensor<16x16xi32>
  %tile = arith.addi %rowoff, %colb : tensor<16x16xi32>
  %sa = tt.splat %pa : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  %p0 = tt.addptr %sa, %tile : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
  %step = tt.splat %c16 : i32 -> tensor<16x16xi32>
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tt.splat %zero : f32 -> tensor<16x16xf32>
  %acc, %pend = scf.for %i = %c0 to %n step %c1 iter_args(%acc_i = %acc0, %p = %p0) -> (tensor<16x16xf32>, tensor<16x16x!tt.ptr<f16>>) : i32 {
    %a = tt.load %p : tensor<16x16x!tt.ptr<f16>> -> tensor<16x16xf16>
    %d = tt.dot %a, %a, %acc_i {input_precision = "tf32"} : tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    %pn = tt.addptr %p, %step : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
    scf.yield %d, %pn : tensor<16x16xf32>, tensor<16x16x!tt.ptr<f16>>
  }
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %pcs = tt.addptr %sc, %tile : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  tt.store %pcs, %acc : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xf32>
  func.return
}

// -----

// A loop from %lo in steps of %s whose final pointers are used afterwards: the index is
// (i - lo) / s, and the carried value stays (only the uses in the body are rewritten).
// CHECK-LABEL: func.func @kept
// CHECK:       %acc, %pend = scf.for %i = %lo to %n step %s iter_args(%acc_i = %acc0, %p = %p0)
// CHECK-NEXT:    %[[D:.*]] = arith.subi %i, %lo : i32
// CHECK-NEXT:    %[[K:.*]] = arith.divsi %[[D]], %s : i32
// CHECK-NEXT:    %[[KS:.*]] = tt.splat %[[K]] : i32 -> tensor<16x16xi32>
// CHECK-NEXT:    %[[OFF:.*]] = arith.muli %[[KS]], %step : tensor<16x16xi32>
// CHECK-NEXT:    %[[P:.*]] = tt.addptr %p0, %[[OFF]]
// CHECK-NEXT:    %a = tt.load %[[P]]
// CHECK:         %pn = tt.addptr %p, %step
// CHECK-NEXT:    scf.yield %d, %pn
// CHECK:       tt.load %pend
func.func @kept(%pa: !tt.ptr<f16>, %pc: !tt.ptr<f32>, %lo: i32, %n: i32, %s: i32) {
  %c16 = arith.constant 16 : i32
  %r16 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %row = tt.expand_dims %r16 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %rowb = tt.broadcast %row : tensor<16x1xi32> -> tensor<16x16xi32>
  %sa = tt.splat %pa : !tt.ptr<f16> -> tensor<16x16x!tt.ptr<f16>>
  %p0 = tt.addptr %sa, %rowb : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
  %step = tt.splat %c16 : i32 -> tensor<16x16xi32>
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tt.splat %zero : f32 -> tensor<16x16xf32>
  %acc, %pend = scf.for %i = %lo to %n step %s iter_args(%acc_i = %acc0, %p = %p0) -> (tensor<16x16xf32>, tensor<16x16x!tt.ptr<f16>>) : i32 {
    %a = tt.load %p : tensor<16x16x!tt.ptr<f16>> -> tensor<16x16xf16>
    %d = tt.dot %a, %a, %acc_i {input_precision = "tf32"} : tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    %pn = tt.addptr %p, %step : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
    scf.yield %d, %pn : tensor<16x16xf32>, tensor<16x16x!tt.ptr<f16>>
  }
  %last = tt.load %pend : tensor<16x16x!tt.ptr<f16>> -> tensor<16x16xf16>
  %lastf = arith.extf %last : tensor<16x16xf16> to tensor<16x16xf32>
  %sum = arith.addf %acc, %lastf : tensor<16x16xf32>
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %pcs = tt.addptr %sc, %rowb : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  tt.store %pcs, %sum : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xf32>
  func.return
}
