// RUN: tile-opt -p merge-masked-loads %s --split-input-file | filecheck %s

// A load under `m & a` after one under `m` (same pointers, same other): the second becomes a select of the first.
// CHECK-LABEL: func.func @narrow_after_wide
// CHECK-NEXT:    %m = arith.cmpi slt, %x, %y : tensor<128xi32>
// CHECK-NEXT:    %a = arith.cmpi sgt, %x, %z : tensor<128xi32>
// CHECK-NEXT:    %wide = tt.load %q mask %m other %o : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
// CHECK-NEXT:    %ma = arith.andi %m, %a : tensor<128xi1>
// CHECK-NEXT:    %{{.*}} = arith.select %a, %wide, %o : tensor<128xi1>, tensor<128xf32>
// CHECK-NOT:     tt.load
// CHECK:         func.return
func.func @narrow_after_wide(%q: tensor<128x!tt.ptr<f32>>, %x: tensor<128xi32>, %y: tensor<128xi32>, %z: tensor<128xi32>, %o: tensor<128xf32>) -> (tensor<128xf32>, tensor<128xf32>) {
  %m = arith.cmpi slt, %x, %y : tensor<128xi32>
  %a = arith.cmpi sgt, %x, %z : tensor<128xi32>
  %wide = tt.load %q mask %m other %o : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %ma = arith.andi %m, %a : tensor<128xi1>
  %narrow = tt.load %q mask %ma other %o : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  func.return %wide, %narrow : tensor<128xf32>, tensor<128xf32>
}

// -----

// The wider load comes second: it moves up, with the mask computed between, to the first's place.
// CHECK-LABEL: func.func @wide_after_narrow
// CHECK:         %mab = arith.andi %ma, %b : tensor<128xi1>
// CHECK-NEXT:    %mb = arith.andi %m, %b : tensor<128xi1>
// CHECK-NEXT:    %wide = tt.load %q mask %mb other %o : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
// CHECK-NEXT:    %[[SEL:.*]] = arith.select %a, %wide, %o : tensor<128xi1>, tensor<128xf32>
// CHECK-NEXT:    %s = arith.addf %[[SEL]], %[[SEL]] : tensor<128xf32>
// CHECK-NEXT:    func.return %s, %wide
func.func @wide_after_narrow(%q: tensor<128x!tt.ptr<f32>>, %x: tensor<128xi32>, %y: tensor<128xi32>, %z: tensor<128xi32>, %o: tensor<128xf32>) -> (tensor<128xf32>, tensor<128xf32>) {
  %m = arith.cmpi slt, %x, %y : tensor<128xi32>
  %a = arith.cmpi sgt, %x, %z : tensor<128xi32>
  %b = arith.cmpi sge, %y, %z : tensor<128xi32>
  %ma = arith.andi %m, %a : tensor<128xi1>
  %mab = arith.andi %ma, %b : tensor<128xi1>
  %narrow = tt.load %q mask %mab other %o : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %s = arith.addf %narrow, %narrow : tensor<128xf32>
  %mb = arith.andi %m, %b : tensor<128xi1>
  %wide = tt.load %q mask %mb other %o : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  func.return %s, %wide : tensor<128xf32>, tensor<128xf32>
}

// -----

// Left alone: a store between the loads (l1, l2), another `other` (l2, l3), masks neither of which holds the
// other's conjuncts (l3, l4), volatile loads (l5, l6), a load without a mask (l7).
// CHECK-LABEL: func.func @not_merged
// CHECK-COUNT-7: tt.load
// CHECK-NOT:     arith.select
func.func @not_merged(%q: tensor<128x!tt.ptr<f32>>, %x: tensor<128xi32>, %y: tensor<128xi32>, %o: tensor<128xf32>, %o2: tensor<128xf32>) -> (tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>) {
  %m = arith.cmpi slt, %x, %y : tensor<128xi32>
  %a = arith.cmpi sgt, %x, %y : tensor<128xi32>
  %b = arith.cmpi ne, %x, %y : tensor<128xi32>
  %ma = arith.andi %m, %a : tensor<128xi1>
  %l1 = tt.load %q mask %m other %o : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  tt.store %q, %o mask %a : tensor<128x!tt.ptr<f32>>, tensor<128xf32>
  %l2 = tt.load %q mask %ma other %o : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %l3 = tt.load %q mask %ma other %o2 : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %l4 = tt.load %q mask %b other %o2 : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %l5 = tt.load %q mask %m other %o {isVolatile = true} : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %l6 = tt.load %q mask %ma other %o {isVolatile = true} : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %l7 = tt.load %q : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  func.return %l1, %l2, %l3, %l4, %l5, %l6, %l7 : tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>
}
