// RUN: tile-opt -p 'convert-to-ttgir{num-warps=8 threads-per-warp=32},coalesce,remove-layout-conversions,cse,dce' %s --split-input-file | filecheck %s
// tt.elementwise_inline_asm with packed_element p > 1 runs its assembly on p consecutive elements of a thread
// at a time: its layout gives each thread runs of p consecutive elements (row-major), and the loads and stores
// of its shape take that layout too, so no conversion is needed.

// 512 x i8 at 8 warps is 2 elements per thread; pack=4 (four bytes in one register) takes 4 per thread
// (warps 4-7 hold copies): the loads, the asm and the store share that layout, nothing is converted.
// CHECK-LABEL: func.func @bytes_pack4
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %x = tt.load %{{.*}} -> tensor<512xi8, [[L:#ttg.blocked<\{sizePerThread = .4., threadsPerWarp = .32., warpsPerCTA = .8., order = .0.\}>]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %y = tt.elementwise_inline_asm "prmt.b32 $0, $1, 0, 0x0123;" {{.*}} %x : tensor<512xi8, [[L]]> -> tensor<512xi8, [[L]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         tt.store %{{.*}}, %y : tensor<512x!tt.ptr<i8>, [[L]]>, tensor<512xi8, [[L]]>
func.func @bytes_pack4(%p: !tt.ptr<i8> {tt.divisibility = 16 : i32}, %q: !tt.ptr<i8> {tt.divisibility = 16 : i32}) {
  %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
  %ps = tt.splat %p : !tt.ptr<i8> -> tensor<512x!tt.ptr<i8>>
  %pp = tt.addptr %ps, %r : tensor<512x!tt.ptr<i8>>, tensor<512xi32>
  %x = tt.load %pp : tensor<512x!tt.ptr<i8>> -> tensor<512xi8>
  %y = tt.elementwise_inline_asm "prmt.b32 $0, $1, 0, 0x0123;" {constraints = "=r,r", packed_element = 4 : i32, pure = true} %x : tensor<512xi8> -> tensor<512xi8>
  %qs = tt.splat %q : !tt.ptr<i8> -> tensor<512x!tt.ptr<i8>>
  %qq = tt.addptr %qs, %r : tensor<512x!tt.ptr<i8>>, tensor<512xi32>
  tt.store %qq, %y : tensor<512x!tt.ptr<i8>>, tensor<512xi8>
  func.return
}

// -----

// 256 x f16 at 8 warps is one element per thread; pack=2 (two halves in one register) takes 2.
// CHECK-LABEL: func.func @halves_pack2
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %s = tt.elementwise_inline_asm "add.rn.f16x2 $0, $1, $2;" {{.*}} -> tensor<256xf16, [[L:#ttg.blocked<\{sizePerThread = .2., threadsPerWarp = .32., warpsPerCTA = .8., order = .0.\}>]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         tt.store %{{.*}}, %s : tensor<256x!tt.ptr<f16>, [[L]]>, tensor<256xf16, [[L]]>
func.func @halves_pack2(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %q: !tt.ptr<f16> {tt.divisibility = 16 : i32}) {
  %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %ps = tt.splat %p : !tt.ptr<f16> -> tensor<256x!tt.ptr<f16>>
  %pp = tt.addptr %ps, %r : tensor<256x!tt.ptr<f16>>, tensor<256xi32>
  %x = tt.load %pp : tensor<256x!tt.ptr<f16>> -> tensor<256xf16>
  %qs = tt.splat %q : !tt.ptr<f16> -> tensor<256x!tt.ptr<f16>>
  %qq = tt.addptr %qs, %r : tensor<256x!tt.ptr<f16>>, tensor<256xi32>
  %y = tt.load %qq : tensor<256x!tt.ptr<f16>> -> tensor<256xf16>
  %s = tt.elementwise_inline_asm "add.rn.f16x2 $0, $1, $2;" {constraints = "=r,r,r", packed_element = 2 : i32, pure = true} %x, %y : tensor<256xf16>, tensor<256xf16> -> tensor<256xf16>
  tt.store %qq, %s : tensor<256x!tt.ptr<f16>>, tensor<256xf16>
  func.return
}

// -----

// A [64, 2] tile with pack=4: the last dimension holds 2, so each thread holds two whole rows of it
// (sizePerThread [2, 2]: four consecutive elements in row-major order), and so do the load and the store.
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %x = tt.load %{{.*}} -> tensor<64x2xi8, [[L:#ttg.blocked<\{sizePerThread = .2, 2., threadsPerWarp = .32, 1., warpsPerCTA = .1, 8., order = .1, 0.\}>]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %y = tt.elementwise_inline_asm {{.*}} %x : tensor<64x2xi8, [[L]]> -> tensor<64x2xi8, [[L]]>
// CHECK-NOT:     ttg.convert_layout
func.func @short_rows(%p: !tt.ptr<i8> {tt.divisibility = 16 : i32}) {
  %r64 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %r2 = tt.make_range {end = 2 : i32, start = 0 : i32} : tensor<2xi32>
  %c2 = arith.constant 2 : i32
  %s2 = tt.splat %c2 : i32 -> tensor<64x1xi32>
  %rows = tt.expand_dims %r64 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %rowstride = arith.muli %rows, %s2 : tensor<64x1xi32>
  %cols = tt.expand_dims %r2 {axis = 0 : i32} : tensor<2xi32> -> tensor<1x2xi32>
  %rowb = tt.broadcast %rowstride : tensor<64x1xi32> -> tensor<64x2xi32>
  %colb = tt.broadcast %cols : tensor<1x2xi32> -> tensor<64x2xi32>
  %offs = arith.addi %rowb, %colb : tensor<64x2xi32>
  %ps = tt.splat %p : !tt.ptr<i8> -> tensor<64x2x!tt.ptr<i8>>
  %pp = tt.addptr %ps, %offs : tensor<64x2x!tt.ptr<i8>>, tensor<64x2xi32>
  %x = tt.load %pp : tensor<64x2x!tt.ptr<i8>> -> tensor<64x2xi8>
  %y = tt.elementwise_inline_asm "prmt.b32 $0, $1, 0, 0x0123;" {constraints = "=r,r", packed_element = 4 : i32, pure = true} %x : tensor<64x2xi8> -> tensor<64x2xi8>
  tt.store %pp, %y : tensor<64x2x!tt.ptr<i8>>, tensor<64x2xi8>
  func.return
}

// -----

// A tile read down its columns (contiguous along dimension 0) and stored along its rows: the load keeps its
// column-major layout, and the asm (four neighbours along the last dimension) takes the row-major layout
// of the store, through one conversion.
// CHECK-LABEL: func.func @column_major_load
// CHECK:         %x = tt.load {{.*}} -> tensor<64x64xi8, [[C:#ttg.blocked<\{[^}]*order = .0, 1.\}>]]>
// CHECK-NEXT:    [[X:%.*]] = ttg.convert_layout %x : tensor<64x64xi8, [[C]]> -> tensor<64x64xi8, [[R:#ttg.blocked<\{sizePerThread = .1, 16., [^}]*order = .1, 0.\}>]]>
// CHECK-NEXT:    %y = tt.elementwise_inline_asm {{.*}} [[X]] : tensor<64x64xi8, [[R]]> -> tensor<64x64xi8, [[R]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         tt.store %{{.*}}, %y : tensor<64x64x!tt.ptr<i8>, [[R]]>, tensor<64x64xi8, [[R]]>
func.func @column_major_load(%p: !tt.ptr<i8> {tt.divisibility = 16 : i32}, %q: !tt.ptr<i8> {tt.divisibility = 16 : i32}) {
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %c64 = arith.constant 64 : i32
  %s64 = tt.splat %c64 : i32 -> tensor<1x64xi32>
  %t64 = tt.splat %c64 : i32 -> tensor<64x1xi32>
  %rows = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %cols = tt.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %colstride = arith.muli %cols, %s64 : tensor<1x64xi32>
  %rowb = tt.broadcast %rows : tensor<64x1xi32> -> tensor<64x64xi32>
  %colb = tt.broadcast %colstride : tensor<1x64xi32> -> tensor<64x64xi32>
  %offs = arith.addi %rowb, %colb : tensor<64x64xi32>
  %ps = tt.splat %p : !tt.ptr<i8> -> tensor<64x64x!tt.ptr<i8>>
  %pp = tt.addptr %ps, %offs : tensor<64x64x!tt.ptr<i8>>, tensor<64x64xi32>
  %x = tt.load %pp : tensor<64x64x!tt.ptr<i8>> -> tensor<64x64xi8>
  %y = tt.elementwise_inline_asm "prmt.b32 $0, $1, 0, 0x0123;" {constraints = "=r,r", packed_element = 4 : i32, pure = true} %x : tensor<64x64xi8> -> tensor<64x64xi8>
  %rowm = arith.muli %rows, %t64 : tensor<64x1xi32>
  %rowmb = tt.broadcast %rowm : tensor<64x1xi32> -> tensor<64x64xi32>
  %colb2 = tt.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %offq = arith.addi %rowmb, %colb2 : tensor<64x64xi32>
  %qs = tt.splat %q : !tt.ptr<i8> -> tensor<64x64x!tt.ptr<i8>>
  %qq = tt.addptr %qs, %offq : tensor<64x64x!tt.ptr<i8>>, tensor<64x64xi32>
  tt.store %qq, %y : tensor<64x64x!tt.ptr<i8>>, tensor<64x64xi8>
  func.return
}

// -----

// On a reduction's result (a slice of the [8, 256] tile's layout): the asm takes a blocked layout of 4
// per thread run, through one conversion, and the store of its result takes that layout.
// CHECK-LABEL: func.func @after_a_reduction
// CHECK:         %m = tt.reduce {{.*}} -> tensor<8xi32, #ttg.slice<
// CHECK-NEXT:    [[M:%.*]] = ttg.convert_layout %m : {{.*}} -> tensor<8xi32, [[P:#ttg.blocked<\{sizePerThread = .4., [^}]*\}>]]>
// CHECK-NEXT:    %y = tt.elementwise_inline_asm {{.*}} [[M]] : tensor<8xi32, [[P]]> -> tensor<8xi32, [[P]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         tt.store %{{.*}}, %y : tensor<8x!tt.ptr<i32>, [[P]]>, tensor<8xi32, [[P]]>
func.func @after_a_reduction(%p: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %q: !tt.ptr<i32> {tt.divisibility = 16 : i32}) {
  %r8 = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %r256 = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %c256 = arith.constant 256 : i32
  %s256 = tt.splat %c256 : i32 -> tensor<8x1xi32>
  %rows = tt.expand_dims %r8 {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
  %rowstride = arith.muli %rows, %s256 : tensor<8x1xi32>
  %cols = tt.expand_dims %r256 {axis = 0 : i32} : tensor<256xi32> -> tensor<1x256xi32>
  %rowb = tt.broadcast %rowstride : tensor<8x1xi32> -> tensor<8x256xi32>
  %colb = tt.broadcast %cols : tensor<1x256xi32> -> tensor<8x256xi32>
  %offs = arith.addi %rowb, %colb : tensor<8x256xi32>
  %ps = tt.splat %p : !tt.ptr<i32> -> tensor<8x256x!tt.ptr<i32>>
  %pp = tt.addptr %ps, %offs : tensor<8x256x!tt.ptr<i32>>, tensor<8x256xi32>
  %x = tt.load %pp : tensor<8x256x!tt.ptr<i32>> -> tensor<8x256xi32>
  %m = tt.reduce %x {axis = 1 : i32, kind = "sum"} : tensor<8x256xi32> -> tensor<8xi32>
  %y = tt.elementwise_inline_asm "{ mov.b32 $0, $7; mov.b32 $1, $6; mov.b32 $2, $5; mov.b32 $3, $4; }" {constraints = "=r,=r,=r,=r,r,r,r,r", packed_element = 4 : i32, pure = true} %m : tensor<8xi32> -> tensor<8xi32>
  %qs = tt.splat %q : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
  %qq = tt.addptr %qs, %r8 : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
  tt.store %qq, %y : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
  func.return
}
