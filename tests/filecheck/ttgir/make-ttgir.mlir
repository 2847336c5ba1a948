// RUN: tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32},coalesce,remove-layout-conversions,cse,dce' %s --split-input-file | filecheck %s
// The TTGIR stage as `make_ttgir` runs it, on TTIR like the front end's: layouts for every
// tensor, coalesced memory accesses, and no layout conversion left in these kernels.

// Vector add: every tensor ends in the coalesced layout (4 x fp32 per thread), and no
// conversion is left.
// CHECK-LABEL: func.func public @add_kernel
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, [[V:#ttg.blocked<\{sizePerThread = .4., threadsPerWarp = .32., warpsPerCTA = .4., order = .0.\}>]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %a = tt.load %xp mask %mask : tensor<1024x!tt.ptr<f32>, [[V]]> -> tensor<1024xf32, [[V]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %b = tt.load %yp mask %mask : tensor<1024x!tt.ptr<f32>, [[V]]> -> tensor<1024xf32, [[V]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %sum = arith.addf %a, %b : tensor<1024xf32, [[V]]>
// CHECK-NEXT:    tt.store %op, %sum mask %mask : tensor<1024x!tt.ptr<f32>, [[V]]>, tensor<1024xf32, [[V]]>
// CHECK-NOT:     ttg.convert_layout
func.func public @add_kernel(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %out: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}) {
  %pid = tt.get_program_id {axis = 0 : i32} : i32
  %c1024 = arith.constant 1024 : i32
  %start = arith.muli %pid, %c1024 : i32
  %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %s = tt.splat %start : i32 -> tensor<1024xi32>
  %offs = arith.addi %s, %r : tensor<1024xi32>
  %ns = tt.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
  %xs = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %xp = tt.addptr %xs, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %a = tt.load %xp mask %mask : tensor<1024x!tt.ptr<f32>> -> tensor<1024xf32>
  %ys = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %yp = tt.addptr %ys, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %b = tt.load %yp mask %mask : tensor<1024x!tt.ptr<f32>> -> tensor<1024xf32>
  %os = tt.splat %out : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %op = tt.addptr %os, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %sum = arith.addf %a, %b : tensor<1024xf32>
  tt.store %op, %sum mask %mask : tensor<1024x!tt.ptr<f32>>, tensor<1024xf32>
  func.return
}

// -----

// Row softmax over one row per program (fp16 in and out, fp32 math): 8 x fp16 per thread
// for the load and the store, the same layout for the math and the reductions, no
// conversion.
// CHECK-LABEL: func.func public @softmax_kernel
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %x16 = tt.load %in_ptrs mask %mask other %other : tensor<1024x!tt.ptr<f16>, [[V:#ttg.blocked<\{sizePerThread = .8., threadsPerWarp = .32., warpsPerCTA = .4., order = .0.\}>]]> -> tensor<1024xf16, [[V]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %max = tt.reduce %x {axis = 0 : i32, kind = "max"} : tensor<1024xf32, [[V]]> -> f32
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %num = math.exp %shifted : tensor<1024xf32, [[V]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         tt.store %out_ptrs, %y16 mask %mask : tensor<1024x!tt.ptr<f16>, [[V]]>, tensor<1024xf16, [[V]]>
// CHECK-NOT:     ttg.convert_layout
func.func public @softmax_kernel(%out: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %in: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %in_stride: i32 {tt.divisibility = 16 : i32}, %out_stride: i32 {tt.divisibility = 16 : i32}, %n_cols: i32 {tt.divisibility = 16 : i32}) {
  %row = tt.get_program_id {axis = 0 : i32} : i32
  %cols = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %ns = tt.splat %n_cols : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %cols, %ns : tensor<1024xi32>
  %in_off = arith.muli %row, %in_stride : i32
  %in_row = tt.addptr %in, %in_off : !tt.ptr<f16>, i32
  %in_rows = tt.splat %in_row : !tt.ptr<f16> -> tensor<1024x!tt.ptr<f16>>
  %in_ptrs = tt.addptr %in_rows, %cols : tensor<1024x!tt.ptr<f16>>, tensor<1024xi32>
  %ninf = arith.constant 0xFC00 : f16
  %other = tt.splat %ninf : f16 -> tensor<1024xf16>
  %x16 = tt.load %in_ptrs mask %mask other %other : tensor<1024x!tt.ptr<f16>> -> tensor<1024xf16>
  %x = arith.extf %x16 : tensor<1024xf16> to tensor<1024xf32>
  %max = tt.reduce %x {axis = 0 : i32, kind = "max"} : tensor<1024xf32> -> f32
  %maxs = tt.splat %max : f32 -> tensor<1024xf32>
  %shifted = arith.subf %x, %maxs : tensor<1024xf32>
  %num = math.exp %shifted : tensor<1024xf32>
  %den = tt.reduce %num {axis = 0 : i32, kind = "sum"} : tensor<1024xf32> -> f32
  %out_off = arith.muli %row, %out_stride : i32
  %out_row = tt.addptr %out, %out_off : !tt.ptr<f16>, i32
  %out_rows = tt.splat %out_row : !tt.ptr<f16> -> tensor<1024x!tt.ptr<f16>>
  %out_ptrs = tt.addptr %out_rows, %cols : tensor<1024x!tt.ptr<f16>>, tensor<1024xi32>
  %dens = tt.splat %den : f32 -> tensor<1024xf32>
  %y = arith.divf %num, %dens : tensor<1024xf32>
  %y16 = arith.truncf %y : tensor<1024xf32> to tensor<1024xf16>
  tt.store %out_ptrs, %y16 mask %mask : tensor<1024x!tt.ptr<f16>>, tensor<1024xf16>
  func.return
}

// -----

// Softmax over 8 rows of a 2-D tile: the row reductions are slices of the tile's layout,
// expand_dims + broadcast bring them back without moving data; no conversion.
// CHECK-LABEL: func.func public @softmax_rows
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %x = tt.load %inp : tensor<8x256x!tt.ptr<f32>, [[T:#ttg.blocked<\{sizePerThread = .1, 4.[^}]*\}>]]> -> tensor<8x256xf32, [[T]]>
// CHECK-NEXT:    %max = tt.reduce %x {axis = 1 : i32, kind = "max"} : tensor<8x256xf32, [[T]]> -> tensor<8xf32, #ttg.slice<{dim = 1, parent = [[T]]}>>
// CHECK-NEXT:    %maxe = tt.expand_dims %max {axis = 1 : i32} : tensor<8xf32, #ttg.slice<{dim = 1, parent = [[T]]}>> -> tensor<8x1xf32, [[T]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         tt.store %outp, %y : tensor<8x256x!tt.ptr<f32>, [[T]]>, tensor<8x256xf32, [[T]]>
// CHECK-NOT:     ttg.convert_layout
func.func public @softmax_rows(%out: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %in: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
  %pid = tt.get_program_id {axis = 0 : i32} : i32
  %c8 = arith.constant 8 : i32
  %first = arith.muli %pid, %c8 : i32
  %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %fs = tt.splat %first : i32 -> tensor<8xi32>
  %rows = arith.addi %fs, %r : tensor<8xi32>
  %cols = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %re = tt.expand_dims %rows {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
  %c256 = arith.constant 256 : i32
  %s256 = tt.splat %c256 : i32 -> tensor<8x1xi32>
  %roff = arith.muli %re, %s256 : tensor<8x1xi32>
  %ce = tt.expand_dims %cols {axis = 0 : i32} : tensor<256xi32> -> tensor<1x256xi32>
  %rb = tt.broadcast %roff : tensor<8x1xi32> -> tensor<8x256xi32>
  %cb = tt.broadcast %ce : tensor<1x256xi32> -> tensor<8x256xi32>
  %offs = arith.addi %rb, %cb : tensor<8x256xi32>
  %ins = tt.splat %in : !tt.ptr<f32> -> tensor<8x256x!tt.ptr<f32>>
  %inp = tt.addptr %ins, %offs : tensor<8x256x!tt.ptr<f32>>, tensor<8x256xi32>
  %x = tt.load %inp : tensor<8x256x!tt.ptr<f32>> -> tensor<8x256xf32>
  %max = tt.reduce %x {axis = 1 : i32, kind = "max"} : tensor<8x256xf32> -> tensor<8xf32>
  %maxe = tt.expand_dims %max {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
  %maxb = tt.broadcast %maxe : tensor<8x1xf32> -> tensor<8x256xf32>
  %shifted = arith.subf %x, %maxb : tensor<8x256xf32>
  %num = math.exp %shifted : tensor<8x256xf32>
  %den = tt.reduce %num {axis = 1 : i32, kind = "sum"} : tensor<8x256xf32> -> tensor<8xf32>
  %dene = tt.expand_dims %den {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
  %denb = tt.broadcast %dene : tensor<8x1xf32> -> tensor<8x256xf32>
  %y = arith.divf %num, %denb : tensor<8x256xf32>
  %outs = tt.splat %out : !tt.ptr<f32> -> tensor<8x256x!tt.ptr<f32>>
  %outp = tt.addptr %outs, %offs : tensor<8x256x!tt.ptr<f32>>, tensor<8x256xi32>
  tt.store %outp, %y : tensor<8x256x!tt.ptr<f32>>, tensor<8x256xf32>
  func.return
}
