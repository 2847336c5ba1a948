// RUN: tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32},coalesce' %s --split-input-file | filecheck %s
// Coalescing: loads and stores take the layout of their widest aligned access, from the
// axis info of their pointers (and masks).

// A contiguous fp32 block whose base is 16-byte aligned: each thread loads and stores 4
// consecutive elements (one 128-bit access); lanes and warps follow along the block. The
// operands are converted to that layout and the loaded value back to its users' layout.
// CHECK-LABEL: func.func @contiguous
// CHECK:         %ptrs = tt.addptr %ps, %offs : tensor<1024x!tt.ptr<f32>, [[D:#ttg.blocked<\{[^}]*\}>]]>
// CHECK-NEXT:    %0 = ttg.convert_layout %ptrs : tensor<1024x!tt.ptr<f32>, [[D]]> -> tensor<1024x!tt.ptr<f32>, [[V4:#ttg.blocked<\{sizePerThread = .4., threadsPerWarp = .32., warpsPerCTA = .4., order = .0.\}>]]>
// CHECK-NEXT:    %x = tt.load %0 : tensor<1024x!tt.ptr<f32>, [[V4]]> -> tensor<1024xf32, [[V4]]>
// CHECK-NEXT:    %x_1 = ttg.convert_layout %x : tensor<1024xf32, [[V4]]> -> tensor<1024xf32, [[D]]>
// CHECK:         %1 = ttg.convert_layout %qptrs : tensor<1024x!tt.ptr<f32>, [[D]]> -> tensor<1024x!tt.ptr<f32>, [[V4]]>
// CHECK-NEXT:    %2 = ttg.convert_layout %x_1 : tensor<1024xf32, [[D]]> -> tensor<1024xf32, [[V4]]>
// CHECK-NEXT:    tt.store %1, %2 : tensor<1024x!tt.ptr<f32>, [[V4]]>, tensor<1024xf32, [[V4]]>
func.func @contiguous(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %q: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
  %pid = tt.get_program_id {axis = 0 : i32} : i32
  %c1024 = arith.constant 1024 : i32
  %start = arith.muli %pid, %c1024 : i32
  %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %s = tt.splat %start : i32 -> tensor<1024xi32>
  %offs = arith.addi %s, %r : tensor<1024xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %x = tt.load %ptrs : tensor<1024x!tt.ptr<f32>> -> tensor<1024xf32>
  %qs = tt.splat %q : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %qptrs = tt.addptr %qs, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  tt.store %qptrs, %x : tensor<1024x!tt.ptr<f32>>, tensor<1024xf32>
  func.return
}

// -----

// Every other element (offsets * 2) is not contiguous: one element per thread, the default
// layout stays and nothing is converted.
// CHECK-LABEL: func.func @strided
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %x = tt.load %ptrs : tensor<1024x!tt.ptr<f32>, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>> -> tensor<1024xf32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>
// CHECK-NOT:     ttg.convert_layout
func.func @strided(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}) -> f32 {
  %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %c2 = arith.constant 2 : i32
  %s2 = tt.splat %c2 : i32 -> tensor<1024xi32>
  %offs = arith.muli %r, %s2 : tensor<1024xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
  %x = tt.load %ptrs : tensor<1024x!tt.ptr<f32>> -> tensor<1024xf32>
  %sum = tt.reduce %x {axis = 0 : i32, kind = "sum"} : tensor<1024xf32> -> f32
  func.return %sum : f32
}

// -----

// fp16: 8 elements make 128 bits. A mask `r < n` with n a multiple of 16 is constant over
// runs of 16, so 8-wide accesses are fine; with an arbitrary n the mask bit changes from one
// element to the next, so that load alone would take one element per thread; it takes the 8 of
// the accesses beside it (Triton's rule: eight scalar loads per thread, no layout conversion
// between the two loads' values).
// CHECK-LABEL: func.func @masks
// CHECK:         %0 = ttg.convert_layout %ptrs : tensor<1024x!tt.ptr<f16>, [[D:#ttg.blocked<\{[^}]*\}>]]> -> tensor<1024x!tt.ptr<f16>, [[V8:#ttg.blocked<\{sizePerThread = .8., threadsPerWarp = .32., warpsPerCTA = .4., order = .0.\}>]]>
// CHECK-NEXT:    %1 = ttg.convert_layout %m16 : tensor<1024xi1, [[D]]> -> tensor<1024xi1, [[V8]]>
// CHECK-NEXT:    %a = tt.load %0 mask %1 : tensor<1024x!tt.ptr<f16>, [[V8]]> -> tensor<1024xf16, [[V8]]>
// CHECK:         %b = tt.load %2 mask %3 : tensor<1024x!tt.ptr<f16>, [[V8]]> -> tensor<1024xf16, [[V8]]>
// CHECK:         tt.store %4, %5 : tensor<1024x!tt.ptr<f16>, [[V8]]>, tensor<1024xf16, [[V8]]>
func.func @masks(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %n16: i32 {tt.divisibility = 16 : i32}, %n: i32) {
  %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %ps = tt.splat %p : !tt.ptr<f16> -> tensor<1024x!tt.ptr<f16>>
  %ptrs = tt.addptr %ps, %r : tensor<1024x!tt.ptr<f16>>, tensor<1024xi32>
  %ns16 = tt.splat %n16 : i32 -> tensor<1024xi32>
  %m16 = arith.cmpi slt, %r, %ns16 : tensor<1024xi32>
  %a = tt.load %ptrs mask %m16 : tensor<1024x!tt.ptr<f16>> -> tensor<1024xf16>
  %ns = tt.splat %n : i32 -> tensor<1024xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<1024xi32>
  %b = tt.load %ptrs mask %m : tensor<1024x!tt.ptr<f16>> -> tensor<1024xf16>
  %c = arith.addf %a, %b : tensor<1024xf16>
  tt.store %ptrs, %c : tensor<1024x!tt.ptr<f16>>, tensor<1024xf16>
  func.return
}

// -----

// A column-major tile (contiguous along dim 0, columns 16-byte aligned): order [0, 1],
// 4 elements per thread down a column, lanes down the columns first.
// CHECK-LABEL: func.func @column_major
// CHECK:         %x = tt.load %{{[0-9]+}} : tensor<64x32x!tt.ptr<f32>, [[COL:#ttg.blocked<\{sizePerThread = .4, 1., threadsPerWarp = .16, 2., warpsPerCTA = .1, 4., order = .0, 1.\}>]]> -> tensor<64x32xf32, [[COL]]>
// CHECK:         tt.store %{{[0-9]+}}, %{{[0-9]+}} : tensor<64x32x!tt.ptr<f32>, [[COL]]>, tensor<64x32xf32, [[COL]]>
func.func @column_major(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %ld: i32 {tt.divisibility = 16 : i32}) {
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %c = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %re = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %ce = tt.expand_dims %c {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %lds = tt.splat %ld : i32 -> tensor<1x32xi32>
  %cols = arith.muli %ce, %lds : tensor<1x32xi32>
  %rb = tt.broadcast %re : tensor<64x1xi32> -> tensor<64x32xi32>
  %cb = tt.broadcast %cols : tensor<1x32xi32> -> tensor<64x32xi32>
  %offs = arith.addi %rb, %cb : tensor<64x32xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %offs : tensor<64x32x!tt.ptr<f32>>, tensor<64x32xi32>
  %x = tt.load %ptrs : tensor<64x32x!tt.ptr<f32>> -> tensor<64x32xf32>
  %y = math.exp %x : tensor<64x32xf32>
  tt.store %ptrs, %y : tensor<64x32x!tt.ptr<f32>>, tensor<64x32xf32>
  func.return
}

// -----

// 128 elements for 128 threads: one element each, whatever the alignment.
// CHECK-LABEL: func.func @small_tile
// CHECK-NOT:     ttg.convert_layout
// CHECK:         tt.load %ptrs : tensor<128x!tt.ptr<f32>, #ttg.blocked<{sizePerThread = [1]
func.func @small_tile(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %x = tt.load %ptrs : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  tt.store %ptrs, %x : tensor<128x!tt.ptr<f32>>, tensor<128xf32>
  func.return
}
