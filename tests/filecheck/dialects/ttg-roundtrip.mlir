// RUN: tile-opt %s | tile-opt | filecheck %s
// TTGIR parses, verifies and prints back: layouts as tensor encodings (written here
// through aliases, printed inline), ttg.convert_layout, and the tt/arith ops on laid-out
// tensors (mask, other and compare results carry the operands' layout; a reduction's
// result and an expand_dims operand are slices).

#row = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#col = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
#flat = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#rows = #ttg.slice<{dim = 1, parent = #row}>
#cols = #ttg.slice<{dim = 0, parent = #row}>

// CHECK:      builtin.module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
// CHECK-LABEL:  func.func public @laid_out
// CHECK-NEXT:     %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>}>>
// CHECK-NEXT:     %c = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>}>>
// CHECK-NEXT:     %re = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32, #ttg.slice<{dim = 1, parent = [[ROW:#ttg.blocked<\{[^}]*\}>]]}>> -> tensor<16x1xi32, [[ROW]]>
// CHECK-NEXT:     %ce = tt.expand_dims %c {axis = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = [[ROW]]}>> -> tensor<1x32xi32, [[ROW]]>
// CHECK-NEXT:     %rb = tt.broadcast %re : tensor<16x1xi32, [[ROW]]> -> tensor<16x32xi32, [[ROW]]>
// CHECK-NEXT:     %cb = tt.broadcast %ce : tensor<1x32xi32, [[ROW]]> -> tensor<16x32xi32, [[ROW]]>
// CHECK-NEXT:     %offs = arith.addi %rb, %cb : tensor<16x32xi32, [[ROW]]>
// CHECK-NEXT:     %n = tt.splat %limit : i32 -> tensor<16x32xi32, [[ROW]]>
// CHECK-NEXT:     %m = arith.cmpi slt, %offs, %n : tensor<16x32xi32, [[ROW]]>
// CHECK-NEXT:     %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x32x!tt.ptr<f32>, [[ROW]]>
// CHECK-NEXT:     %ptrs = tt.addptr %ps, %offs : tensor<16x32x!tt.ptr<f32>, [[ROW]]>, tensor<16x32xi32, [[ROW]]>
// CHECK-NEXT:     %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:     %z = tt.splat %zero : f32 -> tensor<16x32xf32, [[ROW]]>
// CHECK-NEXT:     %x = tt.load %ptrs mask %m other %z : tensor<16x32x!tt.ptr<f32>, [[ROW]]> -> tensor<16x32xf32, [[ROW]]>
// CHECK-NEXT:     %pos = arith.cmpf ogt, %x, %z : tensor<16x32xf32, [[ROW]]>
// CHECK-NEXT:     %y = arith.select %pos, %x, %z : tensor<16x32xi1, [[ROW]]>, tensor<16x32xf32, [[ROW]]>
// CHECK-NEXT:     %sum = tt.reduce %y {axis = 1 : i32, kind = "sum"} : tensor<16x32xf32, [[ROW]]> -> tensor<16xf32, #ttg.slice<{dim = 1, parent = [[ROW]]}>>
// CHECK-NEXT:     %yc = ttg.convert_layout %y : tensor<16x32xf32, [[ROW]]> -> tensor<16x32xf32, [[COL:#ttg.blocked<\{[^}]*\}>]]>
// CHECK-NEXT:     %pc = ttg.convert_layout %ptrs : tensor<16x32x!tt.ptr<f32>, [[ROW]]> -> tensor<16x32x!tt.ptr<f32>, [[COL]]>
// CHECK-NEXT:     tt.store %pc, %yc : tensor<16x32x!tt.ptr<f32>, [[COL]]>, tensor<16x32xf32, [[COL]]>
// CHECK-NEXT:     %flat = tt.reshape %y : tensor<16x32xf32, [[ROW]]> -> tensor<512xf32, #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>
// CHECK-NEXT:     %total = tt.reduce %flat {axis = 0 : i32, kind = "sum"} : tensor<512xf32, #ttg.blocked<{{.*}}>> -> f32
// CHECK-NEXT:     tt.store %p, %total : !tt.ptr<f32>, f32
// CHECK-NEXT:     func.return
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func public @laid_out(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %limit: i32) {
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #rows>
    %c = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #cols>
    %re = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32, #rows> -> tensor<16x1xi32, #row>
    %ce = tt.expand_dims %c {axis = 0 : i32} : tensor<32xi32, #cols> -> tensor<1x32xi32, #row>
    %rb = tt.broadcast %re : tensor<16x1xi32, #row> -> tensor<16x32xi32, #row>
    %cb = tt.broadcast %ce : tensor<1x32xi32, #row> -> tensor<16x32xi32, #row>
    %offs = arith.addi %rb, %cb : tensor<16x32xi32, #row>
    %n = tt.splat %limit : i32 -> tensor<16x32xi32, #row>
    %m = arith.cmpi slt, %offs, %n : tensor<16x32xi32, #row>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x32x!tt.ptr<f32>, #row>
    %ptrs = tt.addptr %ps, %offs : tensor<16x32x!tt.ptr<f32>, #row>, tensor<16x32xi32, #row>
    %zero = arith.constant 0.000000e+00 : f32
    %z = tt.splat %zero : f32 -> tensor<16x32xf32, #row>
    %x = tt.load %ptrs mask %m other %z : tensor<16x32x!tt.ptr<f32>, #row> -> tensor<16x32xf32, #row>
    %pos = arith.cmpf ogt, %x, %z : tensor<16x32xf32, #row>
    %y = arith.select %pos, %x, %z : tensor<16x32xi1, #row>, tensor<16x32xf32, #row>
    %sum = tt.reduce %y {axis = 1 : i32, kind = "sum"} : tensor<16x32xf32, #row> -> tensor<16xf32, #rows>
    %yc = ttg.convert_layout %y : tensor<16x32xf32, #row> -> tensor<16x32xf32, #col>
    %pc = ttg.convert_layout %ptrs : tensor<16x32x!tt.ptr<f32>, #row> -> tensor<16x32x!tt.ptr<f32>, #col>
    tt.store %pc, %yc : tensor<16x32x!tt.ptr<f32>, #col>, tensor<16x32xf32, #col>
    %flat = tt.reshape %y : tensor<16x32xf32, #row> -> tensor<512xf32, #flat>
    %total = tt.reduce %flat {axis = 0 : i32, kind = "sum"} : tensor<512xf32, #flat> -> f32
    tt.store %p, %total : !tt.ptr<f32>, f32
    func.return
  }
}
