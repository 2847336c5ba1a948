// RUN: tile-opt -p fold-known-selects %s --split-input-file | filecheck %s

// In the true branch of `select %c`, an inner `select %c` is its true side (through a select on another condition).
// CHECK-LABEL: func.func @same_condition_inside
// CHECK:         %[[IN:.*]] = arith.select %d, %k, %x : tensor<128xi1>, tensor<128xf32>
// CHECK-NEXT:    %[[OUT:.*]] = arith.select %c, %[[IN]], %z : tensor<128xi1>, tensor<128xf32>
// CHECK-NEXT:    func.return %[[OUT]]
func.func @same_condition_inside(%c: tensor<128xi1>, %d: tensor<128xi1>, %k: tensor<128xf32>, %x: tensor<128xf32>, %y: tensor<128xf32>, %z: tensor<128xf32>) -> tensor<128xf32> {
  %inner = arith.select %c, %x, %y : tensor<128xi1>, tensor<128xf32>
  %mid = arith.select %d, %k, %inner : tensor<128xi1>, tensor<128xf32>
  %out = arith.select %c, %mid, %z : tensor<128xi1>, tensor<128xf32>
  func.return %out : tensor<128xf32>
}

// -----

// In the false branch `%c` is false: `select %c` there is its false side; `andi %c, %d` is false too.
// CHECK-LABEL: func.func @false_branch
// CHECK:         %[[OUT:.*]] = arith.select %c, %z, %y : tensor<128xi1>, tensor<128xf32>
// CHECK-NEXT:    func.return %[[OUT]]
func.func @false_branch(%c: tensor<128xi1>, %d: tensor<128xi1>, %x: tensor<128xf32>, %y: tensor<128xf32>, %z: tensor<128xf32>) -> tensor<128xf32> {
  %cd = arith.andi %c, %d : tensor<128xi1>
  %inner = arith.select %cd, %x, %y : tensor<128xi1>, tensor<128xf32>
  %out = arith.select %c, %z, %inner : tensor<128xi1>, tensor<128xf32>
  func.return %out : tensor<128xf32>
}

// -----

// A true `andi %c, %d` makes both true; a select whose two sides become one value is that value.
// CHECK-LABEL: func.func @conjuncts_and_equal_sides
// CHECK:         %[[OUT:.*]] = arith.select %cd, %x, %z : tensor<128xi1>, tensor<128xf32>
// CHECK-NEXT:    func.return %[[OUT]]
func.func @conjuncts_and_equal_sides(%c: tensor<128xi1>, %d: tensor<128xi1>, %x: tensor<128xf32>, %y: tensor<128xf32>, %z: tensor<128xf32>) -> tensor<128xf32> {
  %cd = arith.andi %c, %d : tensor<128xi1>
  %a = arith.select %c, %x, %y : tensor<128xi1>, tensor<128xf32>
  %b = arith.select %d, %a, %y : tensor<128xi1>, tensor<128xf32>
  %out = arith.select %cd, %b, %z : tensor<128xi1>, tensor<128xf32>
  func.return %out : tensor<128xf32>
}

// -----

// Nothing decided: left alone.
// CHECK-LABEL: func.func @undecided
// CHECK-NEXT:    %inner = arith.select %d, %x, %y
// CHECK-NEXT:    %out = arith.select %c, %inner, %z
// CHECK-NEXT:    func.return %out
func.func @undecided(%c: tensor<128xi1>, %d: tensor<128xi1>, %x: tensor<128xf32>, %y: tensor<128xf32>, %z: tensor<128xf32>) -> tensor<128xf32> {
  %inner = arith.select %d, %x, %y : tensor<128xi1>, tensor<128xf32>
  %out = arith.select %c, %inner, %z : tensor<128xi1>, tensor<128xf32>
  func.return %out : tensor<128xf32>
}
