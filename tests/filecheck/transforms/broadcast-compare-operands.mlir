// RUN: tile-opt -p broadcast-compare-operands %s | filecheck %s

// A mask made of two broadcast compares (xmask & rmask) is compared at full width.
// CHECK-LABEL: func.func @row_and_column_masks
// CHECK-NOT:     tensor<8x1xi1>
// CHECK-DAG:     %[[X:.*]] = tt.broadcast %x : tensor<8x1xi32> -> tensor<8x128xi32>
// CHECK-DAG:     %[[N:.*]] = tt.broadcast %n : tensor<8x1xi32> -> tensor<8x128xi32>
// CHECK-DAG:     %[[XM:.*]] = arith.cmpi slt, %[[X]], %[[N]] : tensor<8x128xi32>
// CHECK-DAG:     %[[R:.*]] = tt.broadcast %r : tensor<1x128xi32> -> tensor<8x128xi32>
// CHECK-DAG:     %[[M:.*]] = tt.broadcast %m : tensor<1x128xi32> -> tensor<8x128xi32>
// CHECK-DAG:     %[[RM:.*]] = arith.cmpi slt, %[[R]], %[[M]] : tensor<8x128xi32>
// CHECK:         %[[AND:.*]] = arith.andi %[[XM]], %[[RM]] : tensor<8x128xi1>
// CHECK-NOT:     tensor<8x1xi1>
func.func @row_and_column_masks(%x: tensor<8x1xi32>, %n: tensor<8x1xi32>, %r: tensor<1x128xi32>,
                                %m: tensor<1x128xi32>) -> tensor<8x128xi1> {
  %xm = arith.cmpi slt, %x, %n : tensor<8x1xi32>
  %rm = arith.cmpi slt, %r, %m : tensor<1x128xi32>
  %xb = tt.broadcast %xm : tensor<8x1xi1> -> tensor<8x128xi1>
  %rb = tt.broadcast %rm : tensor<1x128xi1> -> tensor<8x128xi1>
  %and = arith.andi %xb, %rb : tensor<8x128xi1>
  func.return %and : tensor<8x128xi1>
}

// -----

// Float compares too; a broadcast of anything else stays.
// CHECK-LABEL: func.func @float_compare_and_other_broadcasts
// CHECK:         arith.cmpf olt, {{.*}} : tensor<4x16xf32>
// CHECK:         tt.broadcast %b : tensor<1x16xi1> -> tensor<4x16xi1>
func.func @float_compare_and_other_broadcasts(%a: tensor<1x16xf32>, %c: tensor<1x16xf32>,
                                              %b: tensor<1x16xi1>) -> (tensor<4x16xi1>, tensor<4x16xi1>) {
  %lt = arith.cmpf olt, %a, %c : tensor<1x16xf32>
  %w = tt.broadcast %lt : tensor<1x16xi1> -> tensor<4x16xi1>
  %o = tt.broadcast %b : tensor<1x16xi1> -> tensor<4x16xi1>
  func.return %w, %o : tensor<4x16xi1>, tensor<4x16xi1>
}
