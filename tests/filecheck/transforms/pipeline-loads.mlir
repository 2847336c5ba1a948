// RUN: tile-opt -p 'pipeline-loads,dce' %s --split-input-file | filecheck %s
// pipeline-loads: in a loop of dots, the loads whose addresses follow the induction variable
// are issued one iteration ahead (masked off past the end) and carried in registers.

// CHECK-LABEL: func.func @prefetched
// The first iteration's tile, before the loop, masked by lb < ub:
// CHECK:       %[[IN0:.*]] = arith.cmpi slt, %c0, %n : i32
// CHECK-NEXT:  %[[M0:.*]] = tt.splat %[[IN0]] : i1 -> tensor<16x16xi1>
// CHECK-NEXT:  %[[A0:.*]] = tt.load %{{.*}} mask %[[M0]] : tensor<16x16x!tt.ptr<f16>> -> tensor<16x16xf16>
// CHECK-NEXT:  %acc, %{{.*}} = scf.for %i = %c0 to %n step %c16 iter_args(%acc_i = %acc0, %a = %[[A0]]) -> (tensor<16x16xf32>, tensor<16x16xf16>) : i32 {
// The next iteration's tile first, at i + step, masked by i + step < ub:
// CHECK-NEXT:    %[[NEXT:.*]] = arith.addi %i, %c16 : i32
// CHECK-NEXT:    %{{.*}} = tt.splat %[[NEXT]] : i32 -> tensor<16x16xi32>
// CHECK:         %[[IN:.*]] = arith.cmpi slt, %[[NEXT]], %n : i32
// CHECK-NEXT:    %[[M:.*]] = tt.splat %[[IN]] : i1 -> tensor<16x16xi1>
// CHECK-NEXT:    %[[A1:.*]] = tt.load %{{.*}} mask %[[M]]
// Then this iteration's dot on the carried tile; the old load is gone:
// CHECK-NEXT:    %d = tt.dot %a, %a, %acc_i
// CHECK-NEXT:    scf.yield %d, %[[A1]] : tensor<16x16xf32>, tensor<16x16xf16>
// CHECK-NOT:   tt.load

func.func @prefetched(%pa: !tt.ptr<f16>, %pc: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
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
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tt.splat %zero : f32 -> tensor<16x16xf32>
  %acc = scf.for %i = %c0 to %n step %c16 iter_args(%acc_i = %acc0) -> (tensor<16x16xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<16x16xi32>
    %offs = arith.addi %tile, %is : tensor<16x16xi32>
    %ptrs = tt.addptr %sa, %offs : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
    %a = tt.load %ptrs : tensor<16x16x!tt.ptr<f16>> -> tensor<16x16xf16>
    %d = tt.dot %a, %a, %acc_i {input_precision = "tf32"} : tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %pcs = tt.addptr %sc, %tile : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  tt.store %pcs, %acc : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xf32>
  func.return
}

// -----

// A pointer tile carried around the loop: its address is not a function of the induction
// variable, so the load stays where it is.
// CHECK-LABEL: func.func @carried_pointers
// CHECK:       scf.for
// CHECK-NEXT:    %a = tt.load %ptrs : tensor<16x16x!tt.ptr<f16>> -> tensor<16x16xf16>
// CHECK-NEXT:    %d = tt.dot %a, %a, %acc_i
func.func @carried_pointers(%pa: !tt.ptr<f16>, %pc: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
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
  %ptrs0 = tt.addptr %sa, %tile : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tt.splat %zero : f32 -> tensor<16x16xf32>
  %acc, %end = scf.for %i = %c0 to %n step %c16 iter_args(%acc_i = %acc0, %ptrs = %ptrs0) -> (tensor<16x16xf32>, tensor<16x16x!tt.ptr<f16>>) : i32 {
    %a = tt.load %ptrs : tensor<16x16x!tt.ptr<f16>> -> tensor<16x16xf16>
    %d = tt.dot %a, %a, %acc_i {input_precision = "tf32"} : tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    %next = tt.addptr %ptrs, %c16s : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
    scf.yield %d, %next : tensor<16x16xf32>, tensor<16x16x!tt.ptr<f16>>
  }
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %pcs = tt.addptr %sc, %tile : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  tt.store %pcs, %acc : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xf32>
  func.return
}

// -----

// A prefetched load keeps its cache hints.
// CHECK-LABEL: func.func @hints_travel
// CHECK:       tt.load %{{.*}} mask %{{.*}} cacheModifier = cg evictionPolicy = evict_last
// CHECK:       scf.for
// CHECK:         tt.load %{{.*}} mask %{{.*}} cacheModifier = cg evictionPolicy = evict_last
// CHECK:         tt.dot
func.func @hints_travel(%pa: !tt.ptr<f16>, %pc: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
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
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tt.splat %zero : f32 -> tensor<16x16xf32>
  %acc = scf.for %i = %c0 to %n step %c16 iter_args(%acc_i = %acc0) -> (tensor<16x16xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<16x16xi32>
    %offs = arith.addi %tile, %is : tensor<16x16xi32>
    %ptrs = tt.addptr %sa, %offs : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
    %a = tt.load %ptrs cacheModifier = cg evictionPolicy = evict_last : tensor<16x16x!tt.ptr<f16>> -> tensor<16x16xf16>
    %d = tt.dot %a, %a, %acc_i {input_precision = "tf32"} : tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %pcs = tt.addptr %sc, %tile : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  tt.store %pcs, %acc : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xf32>
  func.return
}

// -----

// A volatile load is not issued an iteration early: it would read another moment's value.
// CHECK-LABEL: func.func @volatile_stays
// CHECK:       scf.for
// CHECK:         %a = tt.load %ptrs {isVolatile = true}
// CHECK-NEXT:    %d = tt.dot %a, %a, %acc_i
func.func @volatile_stays(%pa: !tt.ptr<f16>, %pc: !tt.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
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
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tt.splat %zero : f32 -> tensor<16x16xf32>
  %acc = scf.for %i = %c0 to %n step %c16 iter_args(%acc_i = %acc0) -> (tensor<16x16xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<16x16xi32>
    %offs = arith.addi %tile, %is : tensor<16x16xi32>
    %ptrs = tt.addptr %sa, %offs : tensor<16x16x!tt.ptr<f16>>, tensor<16x16xi32>
    %a = tt.load %ptrs {isVolatile = true} : tensor<16x16x!tt.ptr<f16>> -> tensor<16x16xf16>
    %d = tt.dot %a, %a, %acc_i {input_precision = "tf32"} : tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  %sc = tt.splat %pc : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
  %pcs = tt.addptr %sc, %tile : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
  tt.store %pcs, %acc : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xf32>
  func.return
}
