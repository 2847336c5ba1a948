// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Verifier errors of the tt dialect, one case per chunk.

func.func @broadcast_incompatible(%x: tensor<2x128xf32>) {
  %b = tt.broadcast %x : tensor<2x128xf32> -> tensor<4x128xf32>
  func.return
}
// CHECK: tt.broadcast: cannot broadcast shape [2, 128] to [4, 128]

// -----

func.func @broadcast_rank(%x: tensor<128xf32>) {
  %b = tt.broadcast %x : tensor<128xf32> -> tensor<4x128xf32>
  func.return
}
// CHECK: tt.broadcast: operand and result ranks differ

// -----

func.func @broadcast_element_type(%x: tensor<1x128xf32>) {
  %b = tt.broadcast %x : tensor<1x128xf32> -> tensor<4x128xf16>
  func.return
}
// CHECK: tt.broadcast: operand and result element types differ

// -----

func.func @reduce_axis(%x: tensor<64x128xf32>) {
  %r = tt.reduce %x {axis = 2 : i32, kind = "sum"} : tensor<64x128xf32> -> tensor<64xf32>
  func.return
}
// CHECK: tt.reduce: axis 2 out of range for rank 2

// -----

func.func @reduce_result(%x: tensor<64x128xf32>) {
  %r = tt.reduce %x {axis = 1 : i32, kind = "sum"} : tensor<64x128xf32> -> tensor<128xf32>
  func.return
}
// CHECK: tt.reduce: result type must be tensor<64xf32>

// -----

func.func @reduce_argmax_type(%x: tensor<128xf32>) {
  %r = tt.reduce %x {axis = 0 : i32, kind = "argmax"} : tensor<128xf32> -> f32
  func.return
}
// CHECK: tt.reduce: result type must be i32

// -----

func.func @reduce_kind(%x: tensor<128xf32>) {
  %r = tt.reduce %x {axis = 0 : i32, kind = "mean"} : tensor<128xf32> -> f32
  func.return
}
// CHECK: tt.reduce: unknown kind 'mean'

// -----

func.func @splat_tensor(%x: tensor<4xf32>) {
  %s = tt.splat %x : tensor<4xf32> -> tensor<4xf32>
  func.return
}
// CHECK: tt.splat: operand must be a scalar

// -----

func.func @expand_dims_shape(%x: tensor<128xf32>) {
  %e = tt.expand_dims %x {axis = 1 : i32} : tensor<128xf32> -> tensor<1x128xf32>
  func.return
}
// CHECK: tt.expand_dims: result shape must be [128, 1]

// -----

func.func @reshape_numel(%x: tensor<4x128xf32>) {
  %r = tt.reshape %x : tensor<4x128xf32> -> tensor<256xf32>
  func.return
}
// CHECK: tt.reshape: element counts differ

// -----

func.func @make_range_type() {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<64xi32>
  func.return
}
// CHECK: tt.make_range: result must be tensor<128xi32>

// -----

func.func @program_id_axis() {
  %p = tt.get_program_id {axis = 3 : i32} : i32
  func.return
}
// CHECK: tt.get_program_id: axis must be 0, 1 or 2

// -----

func.func @addptr_shapes(%p: tensor<128x!tt.ptr<f32>>, %o: tensor<64xi32>) {
  %q = tt.addptr %p, %o : tensor<128x!tt.ptr<f32>>, tensor<64xi32>
  func.return
}
// CHECK: tt.addptr: pointer and offset shapes differ

// -----

func.func @addptr_not_pointer(%p: tensor<128xi64>, %o: tensor<128xi32>) {
  %q = tt.addptr %p, %o : tensor<128xi64>, tensor<128xi32>
  func.return
}
// CHECK: tt.addptr: first operand must be pointers

// -----

func.func @load_type(%p: tensor<128x!tt.ptr<f32>>) {
  %v = tt.load %p : tensor<128x!tt.ptr<f32>> -> tensor<128xf16>
  func.return
}
// CHECK: tt.load: result type must match the pointee type

// -----

func.func @store_type(%p: !tt.ptr<f32>, %v: f16) {
  tt.store %p, %v : !tt.ptr<f32>, f16
  func.return
}
// CHECK: tt.store: value type must match the pointee type

// -----

func.func @bitcast_not_pointer(%x: i64) {
  %q = tt.bitcast %x : i64 -> !tt.ptr<f32>
  func.return
}
// CHECK: tt.bitcast: operand and result must be pointers

// -----

func.func @select_condition_shape(%c: tensor<64xi1>, %a: tensor<128xf32>) {
  %s = arith.select %c, %a, %a : tensor<64xi1>, tensor<128xf32>
  func.return
}
// CHECK: arith.select: condition shape differs

// -----

func.func @cmpi_result_is_shaped(%a: tensor<128xi32>) {
  %c = "arith.cmpi"(%a, %a) <{predicate = 2 : i64}> : (tensor<128xi32>, tensor<128xi32>) -> i1
  func.return
}
// CHECK: arith.cmpi: result must be i1-like

// -----

func.func @cmpf_on_integers(%a: tensor<8xi32>) {
  %c = arith.cmpf olt, %a, %a : tensor<8xi32>
  func.return
}
// CHECK: arith.cmpf: bad operand type tensor<8xi32>
