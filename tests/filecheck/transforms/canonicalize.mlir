// RUN: tile-opt -p canonicalize %s --split-input-file | filecheck %s

// A broadcast to its own type is its operand; a real broadcast stays.
// CHECK-LABEL: func.func @broadcast_same_type
// CHECK-NEXT:    %b = tt.broadcast %y : tensor<1x128xf32> -> tensor<4x128xf32>
// CHECK-NEXT:    func.return %x, %b : tensor<4x128xf32>, tensor<4x128xf32>
func.func @broadcast_same_type(%x: tensor<4x128xf32>, %y: tensor<1x128xf32>) -> (tensor<4x128xf32>, tensor<4x128xf32>) {
  %a = tt.broadcast %x : tensor<4x128xf32> -> tensor<4x128xf32>
  %b = tt.broadcast %y : tensor<1x128xf32> -> tensor<4x128xf32>
  func.return %a, %b : tensor<4x128xf32>, tensor<4x128xf32>
}

// -----

// Shape ops of a splat are a splat of the same scalar.
// CHECK-LABEL: func.func @shape_ops_of_splat
// CHECK-NEXT:    %[[B:.*]] = tt.splat %x : f32 -> tensor<4x128xf32>
// CHECK-NEXT:    %[[E:.*]] = tt.splat %x : f32 -> tensor<1x128xf32>
// CHECK-NEXT:    %[[R:.*]] = tt.splat %x : f32 -> tensor<512xf32>
// CHECK-NEXT:    func.return %[[B]], %[[E]], %[[R]]
// CHECK-NOT:     tt.broadcast
func.func @shape_ops_of_splat(%x: f32) -> (tensor<4x128xf32>, tensor<1x128xf32>, tensor<512xf32>) {
  %s = tt.splat %x : f32 -> tensor<1x128xf32>
  %b = tt.broadcast %s : tensor<1x128xf32> -> tensor<4x128xf32>
  %s1 = tt.splat %x : f32 -> tensor<128xf32>
  %e = tt.expand_dims %s1 {axis = 0 : i32} : tensor<128xf32> -> tensor<1x128xf32>
  %r = tt.reshape %b : tensor<4x128xf32> -> tensor<512xf32>
  func.return %b, %e, %r : tensor<4x128xf32>, tensor<1x128xf32>, tensor<512xf32>
}

// -----

// A reshape to its own type is its operand; a real reshape stays.
// CHECK-LABEL: func.func @reshape_same_type
// CHECK-NEXT:    %b = tt.reshape %x : tensor<4x128xf32> -> tensor<512xf32>
// CHECK-NEXT:    func.return %x, %b
func.func @reshape_same_type(%x: tensor<4x128xf32>) -> (tensor<4x128xf32>, tensor<512xf32>) {
  %a = tt.reshape %x : tensor<4x128xf32> -> tensor<4x128xf32>
  %b = tt.reshape %x : tensor<4x128xf32> -> tensor<512xf32>
  func.return %a, %b : tensor<4x128xf32>, tensor<512xf32>
}

// -----

// Adding a zero offset (scalar or splat) is the pointer itself.
// CHECK-LABEL: func.func @addptr_zero
// CHECK-NEXT:    func.return %p, %ps : !tt.ptr<f32>, tensor<8x!tt.ptr<f32>>
func.func @addptr_zero(%p: !tt.ptr<f32>, %ps: tensor<8x!tt.ptr<f32>>) -> (!tt.ptr<f32>, tensor<8x!tt.ptr<f32>>) {
  %c0 = arith.constant 0 : i32
  %q = tt.addptr %p, %c0 : !tt.ptr<f32>, i32
  %z = tt.splat %c0 : i32 -> tensor<8xi32>
  %qs = tt.addptr %ps, %z : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
  func.return %q, %qs : !tt.ptr<f32>, tensor<8x!tt.ptr<f32>>
}

// -----

// Two addptrs with offsets of one type become one addptr of the summed offsets.
// CHECK-LABEL: func.func @addptr_chain
// CHECK-NEXT:    %[[SUM:.*]] = arith.addi %a, %b : tensor<8xi32>
// CHECK-NEXT:    %[[P:.*]] = tt.addptr %ps, %[[SUM]] : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
// CHECK-NEXT:    func.return %[[P]]
func.func @addptr_chain(%ps: tensor<8x!tt.ptr<f32>>, %a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<8x!tt.ptr<f32>> {
  %p1 = tt.addptr %ps, %a : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
  %p2 = tt.addptr %p1, %b : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
  func.return %p2 : tensor<8x!tt.ptr<f32>>
}

// -----

// Offsets of different types are not summed.
// CHECK-LABEL: func.func @addptr_chain_mixed_types
// CHECK-NEXT:    %p1 = tt.addptr %p, %a : !tt.ptr<f32>, i32
// CHECK-NEXT:    %p2 = tt.addptr %p1, %b : !tt.ptr<f32>, i64
// CHECK-NOT:     arith.addi
func.func @addptr_chain_mixed_types(%p: !tt.ptr<f32>, %a: i32, %b: i64) -> !tt.ptr<f32> {
  %p1 = tt.addptr %p, %a : !tt.ptr<f32>, i32
  %p2 = tt.addptr %p1, %b : !tt.ptr<f32>, i64
  func.return %p2 : !tt.ptr<f32>
}

// -----

// A select on a constant (or splat of a constant) condition is the chosen operand;
// a select on an unknown condition stays.
// CHECK-LABEL: func.func @select_constant_condition
// CHECK-NEXT:    %s3 = arith.select %c, %x, %y : tensor<8xi1>, tensor<8xf32>
// CHECK-NEXT:    func.return %x, %y, %s3
func.func @select_constant_condition(%x: tensor<8xf32>, %y: tensor<8xf32>, %c: tensor<8xi1>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %true = arith.constant true
  %false = arith.constant false
  %f = tt.splat %false : i1 -> tensor<8xi1>
  %s1 = arith.select %true, %x, %y : tensor<8xf32>
  %s2 = arith.select %f, %x, %y : tensor<8xi1>, tensor<8xf32>
  %s3 = arith.select %c, %x, %y : tensor<8xi1>, tensor<8xf32>
  func.return %s1, %s2, %s3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// xdsl's own arith canonicalization runs too: x + 0 is x, x * 1 is x.
// CHECK-LABEL: func.func @arith_identities
// CHECK-NEXT:    func.return %x, %x : i32, i32
func.func @arith_identities(%x: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %a = arith.addi %x, %c0 : i32
  %m = arith.muli %x, %c1 : i32
  func.return %a, %m : i32, i32
}
