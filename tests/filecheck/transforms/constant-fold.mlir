// RUN: tile-opt -p constant-fold,dce %s --split-input-file | filecheck %s

// Integer arithmetic wraps to the bit width; division and remainder truncate toward zero.
// CHECK-LABEL: func.func @integers
// CHECK-DAG:     %[[WRAP:.*]] = arith.constant 44 : i8
// CHECK-DAG:     %[[SUB:.*]] = arith.constant 127 : i8
// CHECK-DAG:     %[[DIV:.*]] = arith.constant -3 : i32
// CHECK-DAG:     %[[REM:.*]] = arith.constant -1 : i32
// CHECK-DAG:     %[[DIVU:.*]] = arith.constant 127 : i8
// CHECK-DAG:     %[[SHL:.*]] = arith.constant 56 : i32
// CHECK-DAG:     %[[SHR:.*]] = arith.constant -4 : i32
// CHECK-DAG:     %[[MAXU:.*]] = arith.constant -1 : i8
// CHECK:         func.return %[[WRAP]], %[[SUB]], %[[DIV]], %[[REM]], %[[DIVU]], %[[SHL]], %[[SHR]], %[[MAXU]]
func.func @integers() -> (i8, i8, i32, i32, i8, i32, i32, i8) {
  %c100 = arith.constant 100 : i8
  %c3 = arith.constant 3 : i8
  %cm7 = arith.constant -7 : i32
  %c2 = arith.constant 2 : i32
  %cm1_i8 = arith.constant -1 : i8
  %c2_i8 = arith.constant 2 : i8
  %c7 = arith.constant 7 : i32
  %cm127 = arith.constant -127 : i8
  %wrap = arith.muli %c100, %c3 : i8
  %sub2 = arith.subi %cm127, %c2_i8 : i8
  %div = arith.divsi %cm7, %c2 : i32
  %rem = arith.remsi %cm7, %c2 : i32
  %divu = arith.divui %cm1_i8, %c2_i8 : i8
  %shl = arith.shli %c7, %c3_i32 : i32
  %c3_i32 = arith.constant 3 : i32
  %shr = arith.shrsi %cm7, %c1_i32 : i32
  %c1_i32 = arith.constant 1 : i32
  %maxu = arith.maxui %cm1_i8, %c2_i8 : i8
  func.return %wrap, %sub2, %div, %rem, %divu, %shl, %shr, %maxu : i8, i8, i32, i32, i8, i32, i32, i8
}

// -----

// Division or remainder by zero, INT_MIN / -1 and over-wide shifts are not folded.
// CHECK-LABEL: func.func @not_folded
// CHECK:         %d = arith.divsi %c7, %c0 : i32
// CHECK-NEXT:    %r = arith.remui %c7, %c0 : i32
// CHECK-NEXT:    %o = arith.divsi %min, %cm1 : i32
// CHECK-NEXT:    %s = arith.shli %c7, %c32 : i32
// CHECK-NEXT:    func.return %d, %r, %o, %s
func.func @not_folded() -> (i32, i32, i32, i32) {
  %c7 = arith.constant 7 : i32
  %c0 = arith.constant 0 : i32
  %min = arith.constant -2147483648 : i32
  %cm1 = arith.constant -1 : i32
  %c32 = arith.constant 32 : i32
  %d = arith.divsi %c7, %c0 : i32
  %r = arith.remui %c7, %c0 : i32
  %o = arith.divsi %min, %cm1 : i32
  %s = arith.shli %c7, %c32 : i32
  func.return %d, %r, %o, %s : i32, i32, i32, i32
}

// -----

// Float results are rounded to the result type; f16 overflow gives infinity.
// CHECK-LABEL: func.func @floats
// CHECK-DAG:     %[[ADD:.*]] = arith.constant 3.000000e-01 : f32
// CHECK-DAG:     %[[INF:.*]] = arith.constant 0x7c00 : f16
// CHECK-DAG:     %[[BF:.*]] = arith.constant 1.000000e+00 : bf16
// CHECK-DAG:     %[[REM:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-DAG:     %[[DIV:.*]] = arith.constant 0xff800000 : f32
// CHECK:         func.return %[[ADD]], %[[INF]], %[[BF]], %[[REM]], %[[DIV]]
func.func @floats() -> (f32, f16, bf16, f32, f32) {
  %a = arith.constant 0.1 : f32
  %b = arith.constant 0.2 : f32
  %add = arith.addf %a, %b : f32
  %big = arith.constant 60000.0 : f16
  %two = arith.constant 2.0 : f16
  %inf = arith.mulf %big, %two : f16
  %one = arith.constant 1.0 : bf16
  %tiny = arith.constant 0.001 : bf16
  %bf = arith.addf %one, %tiny : bf16
  %m7 = arith.constant -7.0 : f32
  %c3 = arith.constant 3.0 : f32
  %rem = arith.remf %m7, %c3 : f32
  %zero = arith.constant 0.0 : f32
  %div = arith.divf %m7, %zero : f32
  func.return %add, %inf, %bf, %rem, %div : f32, f16, bf16, f32, f32
}

// -----

// Compares give i1; splats of constants fold to a splat of the result.
// CHECK-LABEL: func.func @compares
// CHECK:         %[[T:.*]] = arith.constant true
// CHECK-NEXT:    %[[S:.*]] = tt.splat %[[T]] : i1 -> tensor<8xi1>
// CHECK-NEXT:    %[[ULT:.*]] = arith.constant false
// CHECK-NEXT:    %[[OLT:.*]] = arith.constant false
// CHECK-NEXT:    %[[UNE:.*]] = arith.constant true
// CHECK-NEXT:    func.return %[[S]], %[[ULT]], %[[OLT]], %[[UNE]]
func.func @compares() -> (tensor<8xi1>, i1, i1, i1) {
  %c1 = arith.constant 1 : i32
  %c5 = arith.constant 5 : i32
  %s1 = tt.splat %c1 : i32 -> tensor<8xi32>
  %s5 = tt.splat %c5 : i32 -> tensor<8xi32>
  %lt = arith.cmpi slt, %s1, %s5 : tensor<8xi32>
  %cm1 = arith.constant -1 : i32
  %ult = arith.cmpi ult, %cm1, %c1 : i32
  %nan = arith.constant 0x7FC00000 : f32
  %x = arith.constant 1.0 : f32
  %olt = arith.cmpf olt, %nan, %x : f32
  %une = arith.cmpf une, %nan, %x : f32
  func.return %lt, %ult, %olt, %une : tensor<8xi1>, i1, i1, i1
}

// -----

// Casts: truncation toward zero, zero extension, bit reinterpretation.
// CHECK-LABEL: func.func @casts
// CHECK-DAG:     %[[FPTOSI:.*]] = arith.constant -2 : i32
// CHECK-DAG:     %[[EXTUI:.*]] = arith.constant 255 : i32
// CHECK-DAG:     %[[TRUNC:.*]] = arith.constant 44 : i8
// CHECK-DAG:     %[[BITS:.*]] = arith.constant 1065353216 : i32
// CHECK-DAG:     %[[SITOFP:.*]] = arith.constant -7.000000e+00 : f16
// CHECK-DAG:     %[[TRUNCF:.*]] = arith.constant 3.140620e+00 : bf16
// CHECK:         %[[BIG:.*]] = arith.fptosi %big : f32 to i8
// CHECK:         func.return %[[FPTOSI]], %[[EXTUI]], %[[TRUNC]], %[[BITS]], %[[SITOFP]], %[[TRUNCF]], %[[BIG]]
func.func @casts() -> (i32, i32, i8, i32, f16, bf16, i8) {
  %f = arith.constant -2.7 : f32
  %fptosi = arith.fptosi %f : f32 to i32
  %cm1 = arith.constant -1 : i8
  %extui = arith.extui %cm1 : i8 to i32
  %c300 = arith.constant 300 : i32
  %trunc = arith.trunci %c300 : i32 to i8
  %one = arith.constant 1.0 : f32
  %bits = arith.bitcast %one : f32 to i32
  %cm7 = arith.constant -7 : i32
  %sitofp = arith.sitofp %cm7 : i32 to f16
  %pi = arith.constant 3.14159265 : f32
  %truncf = arith.truncf %pi : f32 to bf16
  %big = arith.constant 1000.0 : f32
  %out_of_range = arith.fptosi %big : f32 to i8
  func.return %fptosi, %extui, %trunc, %bits, %sitofp, %truncf, %out_of_range : i32, i32, i8, i32, f16, bf16, i8
}

// -----

// math ops and select on constants.
// CHECK-LABEL: func.func @math_and_select
// CHECK-NEXT:    %[[EXP:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[SQRT:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT:    %[[FLOOR:.*]] = arith.constant -2.000000e+00 : f32
// CHECK-NEXT:    %[[FMA:.*]] = arith.constant 7.000000e+00 : f32
// CHECK-NEXT:    %[[CHOSEN:.*]] = arith.constant -2.000000e+00 : f32
// CHECK-NEXT:    %[[SEL:.*]] = tt.splat %[[CHOSEN]] : f32 -> tensor<4xf32>
// CHECK:         func.return %[[EXP]], %[[SQRT]], %[[FLOOR]], %[[FMA]], %[[SEL]]
func.func @math_and_select() -> (f32, f32, f32, f32, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %exp = math.exp %zero : f32
  %nine = arith.constant 9.0 : f32
  %sqrt = math.sqrt %nine : f32
  %x = arith.constant -1.5 : f32
  %floor = math.floor %x : f32
  %fma = math.fma %sqrt, %sqrt, %floor : f32
  %false = arith.constant false
  %s = tt.splat %floor : f32 -> tensor<4xf32>
  %n = tt.splat %nine : f32 -> tensor<4xf32>
  %sel = arith.select %false, %n, %s : tensor<4xf32>
  func.return %exp, %sqrt, %floor, %fma, %sel : f32, f32, f32, f32, tensor<4xf32>
}

// -----

// Tensor ops of splats fold to a splat of one constant, not a dense attribute.
// CHECK-LABEL: func.func @splat_tensors
// CHECK-NEXT:    %[[C:.*]] = arith.constant 384 : i32
// CHECK-NEXT:    %[[S:.*]] = tt.splat %[[C]] : i32 -> tensor<128xi32>
// CHECK-NEXT:    func.return %[[S]]
// CHECK-NOT:     dense
func.func @splat_tensors() -> tensor<128xi32> {
  %c128 = arith.constant 128 : i32
  %c3 = arith.constant 3 : i32
  %a = tt.splat %c128 : i32 -> tensor<128xi32>
  %b = tt.splat %c3 : i32 -> tensor<128xi32>
  %m = arith.muli %a, %b : tensor<128xi32>
  func.return %m : tensor<128xi32>
}

// -----

// Non-constant operands are left alone.
// CHECK-LABEL: func.func @unknown_operand
// CHECK:         %r = arith.addi %x, %c1 : i32
func.func @unknown_operand(%x: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %r = arith.addi %x, %c1 : i32
  func.return %r : i32
}
