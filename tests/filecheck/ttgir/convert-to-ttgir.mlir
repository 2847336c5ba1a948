// RUN: tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32}' %s --split-input-file | filecheck %s
// RUN: tile-opt -p 'convert-to-ttgir{num-warps=1 threads-per-warp=1}' %s --split-input-file | filecheck %s --check-prefix=ONE

// Every tensor gets the default layout (one element per thread, lanes then warps along the
// fastest dimension); elementwise ops, loads and stores need nothing converted. The module
// records the launch shape.
// CHECK:       builtin.module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32}
// CHECK-LABEL: func.func @elementwise
// CHECK-NEXT:    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32, [[D:#ttg.blocked<\{sizePerThread = .1., threadsPerWarp = .32., warpsPerCTA = .4., order = .0.\}>]]>
// CHECK-NEXT:    %ns = tt.splat %n : i32 -> tensor<256xi32, [[D]]>
// CHECK-NEXT:    %m = arith.cmpi slt, %r, %ns : tensor<256xi32, [[D]]>
// CHECK-NEXT:    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>, [[D]]>
// CHECK-NEXT:    %ptrs = tt.addptr %ps, %r : tensor<256x!tt.ptr<f32>, [[D]]>, tensor<256xi32, [[D]]>
// CHECK-NEXT:    %x = tt.load %ptrs mask %m : tensor<256x!tt.ptr<f32>, [[D]]> -> tensor<256xf32, [[D]]>
// CHECK-NEXT:    %y = math.exp %x : tensor<256xf32, [[D]]>
// CHECK-NEXT:    tt.store %ptrs, %y mask %m : tensor<256x!tt.ptr<f32>, [[D]]>, tensor<256xf32, [[D]]>
// CHECK-NEXT:    func.return
// On one thread of one warp, the thread holds the whole tile.
// ONE:         builtin.module attributes {"ttg.num-warps" = 1 : i32, "ttg.threads-per-warp" = 1 : i32}
// ONE-LABEL:   func.func @elementwise
// ONE-NEXT:      %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [1], warpsPerCTA = [1], order = [0]}>>
func.func @elementwise(%p: !tt.ptr<f32>, %n: i32) {
  %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %ns = tt.splat %n : i32 -> tensor<256xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<256xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %r : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
  %x = tt.load %ptrs mask %m : tensor<256x!tt.ptr<f32>> -> tensor<256xf32>
  %y = math.exp %x : tensor<256xf32>
  tt.store %ptrs, %y mask %m : tensor<256x!tt.ptr<f32>>, tensor<256xf32>
  func.return
}

// -----

// A row reduction of a 2-D tile yields the tile's layout sliced at dim 1. expand_dims gets
// its operand converted to a slice of its result's layout, broadcast to its result's
// layout, and the store of the row sums to the 1-D pointers' layout.
// CHECK-LABEL: func.func @row_sum
// CHECK-NEXT:    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, [[D1:#ttg.blocked<\{[^}]*\}>]]>
// CHECK-NEXT:    %c = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, [[D1]]>
// CHECK-NEXT:    %0 = ttg.convert_layout %r : tensor<8xi32, [[D1]]> -> tensor<8xi32, #ttg.slice<{dim = 1, parent = [[COLUMN:#ttg.blocked<\{[^}]*\}>]]}>>
// CHECK-NEXT:    %re = tt.expand_dims %0 {axis = 1 : i32} : tensor<8xi32, #ttg.slice<{dim = 1, parent = [[COLUMN]]}>> -> tensor<8x1xi32, [[COLUMN]]>
// CHECK-NEXT:    %1 = ttg.convert_layout %c : tensor<64xi32, [[D1]]> -> tensor<64xi32, #ttg.slice<{dim = 0, parent = [[ROW:#ttg.blocked<\{[^}]*\}>]]}>>
// CHECK-NEXT:    %ce = tt.expand_dims %1 {axis = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = [[ROW]]}>> -> tensor<1x64xi32, [[ROW]]>
// CHECK-NEXT:    %2 = ttg.convert_layout %re : tensor<8x1xi32, [[COLUMN]]> -> tensor<8x1xi32, [[D2:#ttg.blocked<\{[^}]*\}>]]>
// CHECK-NEXT:    %rb = tt.broadcast %2 : tensor<8x1xi32, [[D2]]> -> tensor<8x64xi32, [[D2]]>
// CHECK-NEXT:    %3 = ttg.convert_layout %ce : tensor<1x64xi32, [[ROW]]> -> tensor<1x64xi32, [[D2]]>
// CHECK-NEXT:    %cb = tt.broadcast %3 : tensor<1x64xi32, [[D2]]> -> tensor<8x64xi32, [[D2]]>
// CHECK:         %v = tt.load %ptrs : tensor<8x64x!tt.ptr<f32>, [[D2]]> -> tensor<8x64xf32, [[D2]]>
// CHECK-NEXT:    %s = tt.reduce %v {axis = 1 : i32, kind = "sum"} : tensor<8x64xf32, [[D2]]> -> tensor<8xf32, #ttg.slice<{dim = 1, parent = [[D2]]}>>
// CHECK:         %4 = ttg.convert_layout %s : tensor<8xf32, #ttg.slice<{dim = 1, parent = [[D2]]}>> -> tensor<8xf32, [[D1]]>
// CHECK-NEXT:    tt.store %rptrs, %4 : tensor<8x!tt.ptr<f32>, [[D1]]>, tensor<8xf32, [[D1]]>
func.func @row_sum(%x: !tt.ptr<f32>) {
  %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %c = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %re = tt.expand_dims %r {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
  %ce = tt.expand_dims %c {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rb = tt.broadcast %re : tensor<8x1xi32> -> tensor<8x64xi32>
  %cb = tt.broadcast %ce : tensor<1x64xi32> -> tensor<8x64xi32>
  %offs = arith.addi %rb, %cb : tensor<8x64xi32>
  %ps = tt.splat %x : !tt.ptr<f32> -> tensor<8x64x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %offs : tensor<8x64x!tt.ptr<f32>>, tensor<8x64xi32>
  %v = tt.load %ptrs : tensor<8x64x!tt.ptr<f32>> -> tensor<8x64xf32>
  %s = tt.reduce %v {axis = 1 : i32, kind = "sum"} : tensor<8x64xf32> -> tensor<8xf32>
  %rp = tt.splat %x : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %rptrs = tt.addptr %rp, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
  tt.store %rptrs, %s : tensor<8x!tt.ptr<f32>>, tensor<8xf32>
  func.return
}

// -----

// A loop-carried tensor has its init value's layout all around the loop.
// CHECK-LABEL: func.func @loop
// CHECK:         %z = tt.splat %zero : f32 -> tensor<128xf32, [[D:#ttg.blocked<\{[^}]*\}>]]>
// CHECK:         %acc = scf.for %i = %c0 to %n step %c128 iter_args(%a = %z) -> (tensor<128xf32, [[D]]>) : i32 {
// CHECK:           %next = arith.addf %a, %x : tensor<128xf32, [[D]]>
// CHECK-NEXT:      scf.yield %next : tensor<128xf32, [[D]]>
// CHECK-NEXT:    }
// CHECK-NEXT:    %s = tt.reduce %acc {axis = 0 : i32, kind = "sum"} : tensor<128xf32, [[D]]> -> f32
func.func @loop(%p: !tt.ptr<f32>, %n: i32) -> f32 {
  %zero = arith.constant 0.000000e+00 : f32
  %z = tt.splat %zero : f32 -> tensor<128xf32>
  %c0 = arith.constant 0 : i32
  %c128 = arith.constant 128 : i32
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %acc = scf.for %i = %c0 to %n step %c128 iter_args(%a = %z) -> (tensor<128xf32>) : i32 {
    %is = tt.splat %i : i32 -> tensor<128xi32>
    %offs = arith.addi %is, %r : tensor<128xi32>
    %ptrs = tt.addptr %ps, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %x = tt.load %ptrs : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
    %next = arith.addf %a, %x : tensor<128xf32>
    scf.yield %next : tensor<128xf32>
  }
  %s = tt.reduce %acc {axis = 0 : i32, kind = "sum"} : tensor<128xf32> -> f32
  func.return %s : f32
}

// -----

// An scf.if result has the default layout; a branch yielding a slice converts to it.
// CHECK-LABEL: func.func @if_yield
// CHECK:         %t = scf.if %c -> (tensor<64xf32, [[D1:#ttg.blocked<\{[^}]*\}>]]>) {
// CHECK-NEXT:      %a = tt.splat %x : f32 -> tensor<64xf32, [[D1]]>
// CHECK-NEXT:      scf.yield %a : tensor<64xf32, [[D1]]>
// CHECK-NEXT:    } else {
// CHECK:           %s = tt.reduce %v {axis = 0 : i32, kind = "max"} : tensor<4x64xf32, [[D2:#ttg.blocked<\{[^}]*\}>]]> -> tensor<64xf32, #ttg.slice<{dim = 0, parent = [[D2]]}>>
// CHECK-NEXT:      %0 = ttg.convert_layout %s : tensor<64xf32, #ttg.slice<{dim = 0, parent = [[D2]]}>> -> tensor<64xf32, [[D1]]>
// CHECK-NEXT:      scf.yield %0 : tensor<64xf32, [[D1]]>
func.func @if_yield(%c: i1, %x: f32, %p: !tt.ptr<f32>) {
  %t = scf.if %c -> (tensor<64xf32>) {
    %a = tt.splat %x : f32 -> tensor<64xf32>
    scf.yield %a : tensor<64xf32>
  } else {
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<4x64x!tt.ptr<f32>>
    %v = tt.load %ps : tensor<4x64x!tt.ptr<f32>> -> tensor<4x64xf32>
    %s = tt.reduce %v {axis = 0 : i32, kind = "max"} : tensor<4x64xf32> -> tensor<64xf32>
    scf.yield %s : tensor<64xf32>
  }
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  tt.store %ptrs, %t : tensor<64x!tt.ptr<f32>>, tensor<64xf32>
  func.return
}
