// RUN: tile-opt -p remove-layout-conversions %s --split-input-file | filecheck %s
// Removing layout conversions: folding, backward rematerialization of cheap producers,
// forward propagation of a conversion's source layout to its users.

// Identity conversions fold; a conversion of a conversion converts the original once (here
// back to where it started, so it folds too); reductions accept any layout, so the
// remaining conversion to #w moves its user to #d instead. The reshape (which keeps its
// operand's layout) wants %x in #w: %x loads one address (a splat pointer), so the load is
// rebuilt in #w instead of converted.
// CHECK-LABEL: func.func @fold
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, [[D:#ttg.blocked<\{[^}]*\}>]]>
// CHECK-NEXT:    %ps_1 = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, [[W:#ttg.blocked<\{sizePerThread = .2.[^}]*\}>]]>
// CHECK-NEXT:    %x = tt.load %ps : tensor<1024x!tt.ptr<f32>, [[D]]> -> tensor<1024xf32, [[D]]>
// CHECK-NEXT:    %x_1 = tt.load %ps_1 : tensor<1024x!tt.ptr<f32>, [[W]]> -> tensor<1024xf32, [[W]]>
// CHECK-NEXT:    %s = tt.reduce %x {axis = 0 : i32, kind = "sum"} : tensor<1024xf32, [[D]]> -> f32
// CHECK-NEXT:    %t = tt.reduce %x {axis = 0 : i32, kind = "max"} : tensor<1024xf32, [[D]]> -> f32
// CHECK-NEXT:    tt.store %out, %s
// CHECK-NEXT:    tt.store %out, %t
// CHECK-NEXT:    %flat = tt.reshape %x_1
#d = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#v = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#w = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @fold(%p: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #d>
    %x = tt.load %ps : tensor<1024x!tt.ptr<f32>, #d> -> tensor<1024xf32, #d>
    %same = ttg.convert_layout %x : tensor<1024xf32, #d> -> tensor<1024xf32, #d>
    %there = ttg.convert_layout %same : tensor<1024xf32, #d> -> tensor<1024xf32, #v>
    %back = ttg.convert_layout %there : tensor<1024xf32, #v> -> tensor<1024xf32, #d>
    %other = ttg.convert_layout %there : tensor<1024xf32, #v> -> tensor<1024xf32, #w>
    %s = tt.reduce %back {axis = 0 : i32, kind = "sum"} : tensor<1024xf32, #d> -> f32
    %t = tt.reduce %other {axis = 0 : i32, kind = "max"} : tensor<1024xf32, #w> -> f32
    tt.store %out, %s : !tt.ptr<f32>, f32
    tt.store %out, %t : !tt.ptr<f32>, f32
    %kept = ttg.convert_layout %there : tensor<1024xf32, #v> -> tensor<1024xf32, #w>
    %flat = tt.reshape %kept : tensor<1024xf32, #w> -> tensor<1024xf32, #d>
    tt.store %ps, %flat : tensor<1024x!tt.ptr<f32>, #d>, tensor<1024xf32, #d>
    func.return
  }
}

// -----

// The pointers are rebuilt in the load's layout (splats, range, index arithmetic) instead
// of being converted; the originals are then dead.
// CHECK-LABEL: func.func @rematerialize
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, [[V:#ttg.blocked<\{sizePerThread = .4.[^}]*\}>]]>
// CHECK-NEXT:    %s = tt.splat %start : i32 -> tensor<1024xi32, [[V]]>
// CHECK-NEXT:    %offs = arith.addi %s, %r : tensor<1024xi32, [[V]]>
// CHECK-NEXT:    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, [[V]]>
// CHECK-NEXT:    %ptrs = tt.addptr %ps, %offs : tensor<1024x!tt.ptr<f32>, [[V]]>, tensor<1024xi32, [[V]]>
// CHECK-NEXT:    %x = tt.load %ptrs : tensor<1024x!tt.ptr<f32>, [[V]]> -> tensor<1024xf32, [[V]]>
// CHECK-NEXT:    tt.store %ptrs, %x : tensor<1024x!tt.ptr<f32>, [[V]]>, tensor<1024xf32, [[V]]>
// CHECK-NEXT:    func.return
#d = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#v = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @rematerialize(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %start: i32) {
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #d>
    %s = tt.splat %start : i32 -> tensor<1024xi32, #d>
    %offs = arith.addi %s, %r : tensor<1024xi32, #d>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #d>
    %ptrs = tt.addptr %ps, %offs : tensor<1024x!tt.ptr<f32>, #d>, tensor<1024xi32, #d>
    %vptrs = ttg.convert_layout %ptrs : tensor<1024x!tt.ptr<f32>, #d> -> tensor<1024x!tt.ptr<f32>, #v>
    %x = tt.load %vptrs : tensor<1024x!tt.ptr<f32>, #v> -> tensor<1024xf32, #v>
    tt.store %vptrs, %x : tensor<1024x!tt.ptr<f32>, #v>, tensor<1024xf32, #v>
    func.return
  }
}

// -----

// The loads' layout spreads forward to the elementwise ops and the reduction: the
// conversions after the loads and before the store go, the splat is rebuilt.
// CHECK-LABEL: func.func @forward
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %sum = arith.addf %x, %y : tensor<1024xf32, [[V:#ttg.blocked<\{sizePerThread = .4.[^}]*\}>]]>
// CHECK-NEXT:    %e = math.exp %sum : tensor<1024xf32, [[V]]>
// CHECK-NEXT:    %z = arith.mulf %e, %twos : tensor<1024xf32, [[V]]>
// CHECK-NEXT:    %total = tt.reduce %z {axis = 0 : i32, kind = "sum"} : tensor<1024xf32, [[V]]> -> f32
// CHECK:         tt.store %p, %z : tensor<1024x!tt.ptr<f32>, [[V]]>, tensor<1024xf32, [[V]]>
#d = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#v = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @forward(%p: tensor<1024x!tt.ptr<f32>, #v>, %q: tensor<1024x!tt.ptr<f32>, #v>, %out: !tt.ptr<f32>) {
    %x = tt.load %p : tensor<1024x!tt.ptr<f32>, #v> -> tensor<1024xf32, #v>
    %xd = ttg.convert_layout %x : tensor<1024xf32, #v> -> tensor<1024xf32, #d>
    %y = tt.load %q : tensor<1024x!tt.ptr<f32>, #v> -> tensor<1024xf32, #v>
    %yd = ttg.convert_layout %y : tensor<1024xf32, #v> -> tensor<1024xf32, #d>
    %two = arith.constant 2.000000e+00 : f32
    %twos = tt.splat %two : f32 -> tensor<1024xf32, #d>
    %sum = arith.addf %xd, %yd : tensor<1024xf32, #d>
    %e = math.exp %sum : tensor<1024xf32, #d>
    %z = arith.mulf %e, %twos : tensor<1024xf32, #d>
    %total = tt.reduce %z {axis = 0 : i32, kind = "sum"} : tensor<1024xf32, #d> -> f32
    tt.store %out, %total : !tt.ptr<f32>, f32
    %zv = ttg.convert_layout %z : tensor<1024xf32, #d> -> tensor<1024xf32, #v>
    tt.store %p, %zv : tensor<1024x!tt.ptr<f32>, #v>, tensor<1024xf32, #v>
    func.return
  }
}

// -----

// A loop-carried accumulator takes the layout of the load feeding it, all around the
// loop (its init splat is rebuilt); the one conversion left is after the loop.
// CHECK-LABEL: func.func @loop
// CHECK:         %z = tt.splat %zero : f32 -> tensor<1024xf32, [[V:#ttg.blocked<\{sizePerThread = .4.[^}]*\}>]]>
// CHECK:         %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<1024xf32, [[V]]>) : i32 {
// CHECK-NEXT:      %x = tt.load %p
// CHECK-NEXT:      %next = arith.addf %a, %x : tensor<1024xf32, [[V]]>
// CHECK-NEXT:      scf.yield %next : tensor<1024xf32, [[V]]>
// CHECK-NEXT:    }
// CHECK-NEXT:    %0 = ttg.convert_layout %acc : tensor<1024xf32, [[V]]> -> tensor<1024xf32, #ttg.blocked<{sizePerThread = [1]
// CHECK-NEXT:    tt.store %out, %0
#d = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#v = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @loop(%p: tensor<1024x!tt.ptr<f32>, #v>, %n: i32, %out: tensor<1024x!tt.ptr<f32>, #d>) {
    %zero = arith.constant 0.000000e+00 : f32
    %z = tt.splat %zero : f32 -> tensor<1024xf32, #d>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<1024xf32, #d>) : i32 {
      %x = tt.load %p : tensor<1024x!tt.ptr<f32>, #v> -> tensor<1024xf32, #v>
      %xd = ttg.convert_layout %x : tensor<1024xf32, #v> -> tensor<1024xf32, #d>
      %next = arith.addf %a, %xd : tensor<1024xf32, #d>
      scf.yield %next : tensor<1024xf32, #d>
    }
    tt.store %out, %acc : tensor<1024x!tt.ptr<f32>, #d>, tensor<1024xf32, #d>
    func.return
  }
}

// -----

// Moving the reshape's operand would need a conversion on the other side: nothing changes.
// CHECK-LABEL: func.func @must_stay
// CHECK-NEXT:    %x = tt.load %p
// CHECK-NEXT:    %xd = ttg.convert_layout %x
// CHECK-NEXT:    %r = tt.reshape %xd
#d = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#v = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#t = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @must_stay(%p: tensor<1024x!tt.ptr<f32>, #v>, %q: tensor<8x128x!tt.ptr<f32>, #t>) {
    %x = tt.load %p : tensor<1024x!tt.ptr<f32>, #v> -> tensor<1024xf32, #v>
    %xd = ttg.convert_layout %x : tensor<1024xf32, #v> -> tensor<1024xf32, #d>
    %r = tt.reshape %xd : tensor<1024xf32, #d> -> tensor<8x128xf32, #t>
    tt.store %q, %r : tensor<8x128x!tt.ptr<f32>, #t>, tensor<8x128xf32, #t>
    func.return
  }
}

// -----

// A row maximum broadcast back over its rows: expand_dims of a slice of the tile's layout
// gives the tile's layout, so both conversions go (`x - max(x, 1)[:, None]` moves no data).
// CHECK-LABEL: func.func @row_max
// CHECK-NEXT:    %x = tt.load %p : tensor<8x64x!tt.ptr<f32>, [[T:#ttg.blocked<\{[^}]*\}>]]> -> tensor<8x64xf32, [[T]]>
// CHECK-NEXT:    %m = tt.reduce %x {axis = 1 : i32, kind = "max"} : tensor<8x64xf32, [[T]]> -> tensor<8xf32, #ttg.slice<{dim = 1, parent = [[T]]}>>
// CHECK-NEXT:    %me = tt.expand_dims %m {axis = 1 : i32} : tensor<8xf32, #ttg.slice<{dim = 1, parent = [[T]]}>> -> tensor<8x1xf32, [[T]]>
// CHECK-NEXT:    %mb = tt.broadcast %me : tensor<8x1xf32, [[T]]> -> tensor<8x64xf32, [[T]]>
// CHECK-NEXT:    %y = arith.subf %x, %mb : tensor<8x64xf32, [[T]]>
// CHECK-NEXT:    tt.store %p, %y
#d1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#c = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>
#t = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @row_max(%p: tensor<8x64x!tt.ptr<f32>, #t>) {
    %x = tt.load %p : tensor<8x64x!tt.ptr<f32>, #t> -> tensor<8x64xf32, #t>
    %m = tt.reduce %x {axis = 1 : i32, kind = "max"} : tensor<8x64xf32, #t> -> tensor<8xf32, #ttg.slice<{dim = 1, parent = #t}>>
    %mc = ttg.convert_layout %m : tensor<8xf32, #ttg.slice<{dim = 1, parent = #t}>> -> tensor<8xf32, #ttg.slice<{dim = 1, parent = #c}>>
    %me = tt.expand_dims %mc {axis = 1 : i32} : tensor<8xf32, #ttg.slice<{dim = 1, parent = #c}>> -> tensor<8x1xf32, #c>
    %mt = ttg.convert_layout %me : tensor<8x1xf32, #c> -> tensor<8x1xf32, #t>
    %mb = tt.broadcast %mt : tensor<8x1xf32, #t> -> tensor<8x64xf32, #t>
    %y = arith.subf %x, %mb : tensor<8x64xf32, #t>
    tt.store %p, %y : tensor<8x64x!tt.ptr<f32>, #t>, tensor<8x64xf32, #t>
    func.return
  }
}

// -----

// A load of few distinct elements (a per-row mean broadcast over 64 columns: 8 values for
// 512 elements, fewer than the 128 threads) is rebuilt in the layout of the arithmetic it
// feeds, like a splat: the column-contiguous layout of the large load spreads to the
// subtraction and the store, and no conversion is left (a column sum's inner loop).
// CHECK-LABEL: func.func @broadcast_load
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %mean = tt.load %{{.*}} : tensor<64x8x!tt.ptr<f32>, [[C:#ttg.blocked<\{sizePerThread = .4, 1.[^}]*\}>]]> -> tensor<64x8xf32, [[C]]>
// CHECK:         %y = arith.subf %xf, %mean{{.*}} : tensor<64x8xf32, [[C]]>
// CHECK-NOT:     ttg.convert_layout
#col = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>
#row = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [16, 2], warpsPerCTA = [4, 1], order = [1, 0]}>
#d2 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @broadcast_load(%px: tensor<64x8x!tt.ptr<f16>, #col>, %m: !tt.ptr<f32>, %out: tensor<64x8x!tt.ptr<f32>, #col>) {
    %x = tt.load %px : tensor<64x8x!tt.ptr<f16>, #col> -> tensor<64x8xf16, #col>
    %xd = ttg.convert_layout %x : tensor<64x8xf16, #col> -> tensor<64x8xf16, #d2>
    %xf = arith.extf %xd : tensor<64x8xf16, #d2> to tensor<64x8xf32, #d2>
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #ttg.slice<{dim = 0, parent = #row}>>
    %re = tt.expand_dims %r {axis = 0 : i32} : tensor<8xi32, #ttg.slice<{dim = 0, parent = #row}>> -> tensor<1x8xi32, #row>
    %ms = tt.splat %m : !tt.ptr<f32> -> tensor<1x8x!tt.ptr<f32>, #row>
    %mp = tt.addptr %ms, %re : tensor<1x8x!tt.ptr<f32>, #row>, tensor<1x8xi32, #row>
    %mb = tt.broadcast %mp : tensor<1x8x!tt.ptr<f32>, #row> -> tensor<64x8x!tt.ptr<f32>, #row>
    %mean = tt.load %mb : tensor<64x8x!tt.ptr<f32>, #row> -> tensor<64x8xf32, #row>
    %md = ttg.convert_layout %mean : tensor<64x8xf32, #row> -> tensor<64x8xf32, #d2>
    %y = arith.subf %xf, %md : tensor<64x8xf32, #d2>
    %yc = ttg.convert_layout %y : tensor<64x8xf32, #d2> -> tensor<64x8xf32, #col>
    tt.store %out, %yc : tensor<64x8x!tt.ptr<f32>, #col>, tensor<64x8xf32, #col>
    func.return
  }
}


// -----

// A chain of 40 elementwise ops (deeper than any cheap index arithmetic; a Philox random-number
// chain is like it) that only the conversion uses is rebuilt in the load's layout: its
// originals die, so nothing is computed twice and no conversion is left.
// CHECK-LABEL: func.func @deep_chain_rebuilt
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %h39 = arith.xori %h38, %k : tensor<1024xi32, [[V:#ttg.blocked<\{sizePerThread = .4.[^}]*\}>]]>
// CHECK-NEXT:    %mask = arith.cmpi sgt, %h39, %k : tensor<1024xi32, [[V]]>
// CHECK-NOT:     ttg.convert_layout
#d = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#v = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @deep_chain_rebuilt(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %seed: i32) {
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #d>
    %k = tt.splat %seed : i32 -> tensor<1024xi32, #d>
    %h0 = arith.muli %r, %k : tensor<1024xi32, #d>
    %h1 = arith.xori %h0, %k : tensor<1024xi32, #d>
    %h2 = arith.muli %h1, %k : tensor<1024xi32, #d>
    %h3 = arith.xori %h2, %k : tensor<1024xi32, #d>
    %h4 = arith.muli %h3, %k : tensor<1024xi32, #d>
    %h5 = arith.xori %h4, %k : tensor<1024xi32, #d>
    %h6 = arith.muli %h5, %k : tensor<1024xi32, #d>
    %h7 = arith.xori %h6, %k : tensor<1024xi32, #d>
    %h8 = arith.muli %h7, %k : tensor<1024xi32, #d>
    %h9 = arith.xori %h8, %k : tensor<1024xi32, #d>
    %h10 = arith.muli %h9, %k : tensor<1024xi32, #d>
    %h11 = arith.xori %h10, %k : tensor<1024xi32, #d>
    %h12 = arith.muli %h11, %k : tensor<1024xi32, #d>
    %h13 = arith.xori %h12, %k : tensor<1024xi32, #d>
    %h14 = arith.muli %h13, %k : tensor<1024xi32, #d>
    %h15 = arith.xori %h14, %k : tensor<1024xi32, #d>
    %h16 = arith.muli %h15, %k : tensor<1024xi32, #d>
    %h17 = arith.xori %h16, %k : tensor<1024xi32, #d>
    %h18 = arith.muli %h17, %k : tensor<1024xi32, #d>
    %h19 = arith.xori %h18, %k : tensor<1024xi32, #d>
    %h20 = arith.muli %h19, %k : tensor<1024xi32, #d>
    %h21 = arith.xori %h20, %k : tensor<1024xi32, #d>
    %h22 = arith.muli %h21, %k : tensor<1024xi32, #d>
    %h23 = arith.xori %h22, %k : tensor<1024xi32, #d>
    %h24 = arith.muli %h23, %k : tensor<1024xi32, #d>
    %h25 = arith.xori %h24, %k : tensor<1024xi32, #d>
    %h26 = arith.muli %h25, %k : tensor<1024xi32, #d>
    %h27 = arith.xori %h26, %k : tensor<1024xi32, #d>
    %h28 = arith.muli %h27, %k : tensor<1024xi32, #d>
    %h29 = arith.xori %h28, %k : tensor<1024xi32, #d>
    %h30 = arith.muli %h29, %k : tensor<1024xi32, #d>
    %h31 = arith.xori %h30, %k : tensor<1024xi32, #d>
    %h32 = arith.muli %h31, %k : tensor<1024xi32, #d>
    %h33 = arith.xori %h32, %k : tensor<1024xi32, #d>
    %h34 = arith.muli %h33, %k : tensor<1024xi32, #d>
    %h35 = arith.xori %h34, %k : tensor<1024xi32, #d>
    %h36 = arith.muli %h35, %k : tensor<1024xi32, #d>
    %h37 = arith.xori %h36, %k : tensor<1024xi32, #d>
    %h38 = arith.muli %h37, %k : tensor<1024xi32, #d>
    %h39 = arith.xori %h38, %k : tensor<1024xi32, #d>
    %mask = arith.cmpi sgt, %h39, %k : tensor<1024xi32, #d>
    %vmask = ttg.convert_layout %mask : tensor<1024xi1, #d> -> tensor<1024xi1, #v>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #v>
    %vr = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #v>
    %ptrs = tt.addptr %ps, %vr : tensor<1024x!tt.ptr<f32>, #v>, tensor<1024xi32, #v>
    %x = tt.load %ptrs mask %vmask : tensor<1024x!tt.ptr<f32>, #v> -> tensor<1024xf32, #v>
    tt.store %ptrs, %x mask %vmask : tensor<1024x!tt.ptr<f32>, #v>, tensor<1024xf32, #v>
    func.return
  }
}

// -----

// The same chain, but every link is also stored in the old layout: rebuilding would compute
// 40 ops twice, so the mask is converted once instead.
// CHECK-LABEL: func.func @shared_chain_converted
// CHECK:         %h39 = arith.xori %h38, %k : tensor<1024xi32, [[D:#ttg.blocked<\{sizePerThread = .1.[^}]*\}>]]>
// CHECK:         ttg.convert_layout %mask : tensor<1024xi1, [[D]]> -> tensor<1024xi1, [[V:#ttg.blocked<\{sizePerThread = .4.[^}]*\}>]]>
// CHECK-NOT:     arith.xori {{.*}}[[V]]
#d = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#v = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @shared_chain_converted(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %q: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %seed: i32) {
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #d>
    %k = tt.splat %seed : i32 -> tensor<1024xi32, #d>
    %h0 = arith.muli %r, %k : tensor<1024xi32, #d>
    %h1 = arith.xori %h0, %k : tensor<1024xi32, #d>
    %h2 = arith.muli %h1, %k : tensor<1024xi32, #d>
    %h3 = arith.xori %h2, %k : tensor<1024xi32, #d>
    %h4 = arith.muli %h3, %k : tensor<1024xi32, #d>
    %h5 = arith.xori %h4, %k : tensor<1024xi32, #d>
    %h6 = arith.muli %h5, %k : tensor<1024xi32, #d>
    %h7 = arith.xori %h6, %k : tensor<1024xi32, #d>
    %h8 = arith.muli %h7, %k : tensor<1024xi32, #d>
    %h9 = arith.xori %h8, %k : tensor<1024xi32, #d>
    %h10 = arith.muli %h9, %k : tensor<1024xi32, #d>
    %h11 = arith.xori %h10, %k : tensor<1024xi32, #d>
    %h12 = arith.muli %h11, %k : tensor<1024xi32, #d>
    %h13 = arith.xori %h12, %k : tensor<1024xi32, #d>
    %h14 = arith.muli %h13, %k : tensor<1024xi32, #d>
    %h15 = arith.xori %h14, %k : tensor<1024xi32, #d>
    %h16 = arith.muli %h15, %k : tensor<1024xi32, #d>
    %h17 = arith.xori %h16, %k : tensor<1024xi32, #d>
    %h18 = arith.muli %h17, %k : tensor<1024xi32, #d>
    %h19 = arith.xori %h18, %k : tensor<1024xi32, #d>
    %h20 = arith.muli %h19, %k : tensor<1024xi32, #d>
    %h21 = arith.xori %h20, %k : tensor<1024xi32, #d>
    %h22 = arith.muli %h21, %k : tensor<1024xi32, #d>
    %h23 = arith.xori %h22, %k : tensor<1024xi32, #d>
    %h24 = arith.muli %h23, %k : tensor<1024xi32, #d>
    %h25 = arith.xori %h24, %k : tensor<1024xi32, #d>
    %h26 = arith.muli %h25, %k : tensor<1024xi32, #d>
    %h27 = arith.xori %h26, %k : tensor<1024xi32, #d>
    %h28 = arith.muli %h27, %k : tensor<1024xi32, #d>
    %h29 = arith.xori %h28, %k : tensor<1024xi32, #d>
    %h30 = arith.muli %h29, %k : tensor<1024xi32, #d>
    %h31 = arith.xori %h30, %k : tensor<1024xi32, #d>
    %h32 = arith.muli %h31, %k : tensor<1024xi32, #d>
    %h33 = arith.xori %h32, %k : tensor<1024xi32, #d>
    %h34 = arith.muli %h33, %k : tensor<1024xi32, #d>
    %h35 = arith.xori %h34, %k : tensor<1024xi32, #d>
    %h36 = arith.muli %h35, %k : tensor<1024xi32, #d>
    %h37 = arith.xori %h36, %k : tensor<1024xi32, #d>
    %h38 = arith.muli %h37, %k : tensor<1024xi32, #d>
    %h39 = arith.xori %h38, %k : tensor<1024xi32, #d>
    %mask = arith.cmpi sgt, %h39, %k : tensor<1024xi32, #d>
    %vmask = ttg.convert_layout %mask : tensor<1024xi1, #d> -> tensor<1024xi1, #v>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #v>
    %vr = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #v>
    %ptrs = tt.addptr %ps, %vr : tensor<1024x!tt.ptr<f32>, #v>, tensor<1024xi32, #v>
    %x = tt.load %ptrs mask %vmask : tensor<1024x!tt.ptr<f32>, #v> -> tensor<1024xf32, #v>
    tt.store %ptrs, %x mask %vmask : tensor<1024x!tt.ptr<f32>, #v>, tensor<1024xf32, #v>
    %dps = tt.splat %q : !tt.ptr<i32> -> tensor<1024x!tt.ptr<i32>, #d>
    %dptrs = tt.addptr %dps, %r : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h0 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h1 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h2 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h3 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h4 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h5 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h6 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h7 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h8 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h9 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h10 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h11 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h12 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h13 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h14 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h15 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h16 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h17 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h18 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h19 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h20 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h21 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h22 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h23 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h24 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h25 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h26 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h27 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h28 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h29 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h30 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h31 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h32 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h33 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h34 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h35 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h36 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h37 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h38 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    tt.store %dptrs, %h39 : tensor<1024x!tt.ptr<i32>, #d>, tensor<1024xi32, #d>
    func.return
  }
}

// -----

// A chain of 70 ops (a Philox chain is like it) whose value two stores want in two other layouts:
// each conversion alone is cheaper to rebuild (the original dies after the second), but that
// leaves two copies of the chain. The second copy is a conversion of the first instead: the
// chain is computed once, and one conversion is left.
// CHECK-LABEL: func.func @chain_in_two_layouts
// CHECK:         %h69 = arith.xori %h68, %k : tensor<1024xi32, [[A:#ttg.blocked<[^>]*>]]>
// CHECK-NOT:     %h69{{.*}} = arith.xori
// CHECK:         ttg.convert_layout %h69 : tensor<1024xi32, [[A]]> -> tensor<1024xi32, [[B:#ttg.blocked<[^>]*>]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK-NOT:     arith.xori
#d = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#v = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#w = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @chain_in_two_layouts(%p: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %q: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %seed: i32) {
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #d>
    %k = tt.splat %seed : i32 -> tensor<1024xi32, #d>
    %h0 = arith.muli %r, %k : tensor<1024xi32, #d>
    %h1 = arith.xori %h0, %k : tensor<1024xi32, #d>
    %h2 = arith.muli %h1, %k : tensor<1024xi32, #d>
    %h3 = arith.xori %h2, %k : tensor<1024xi32, #d>
    %h4 = arith.muli %h3, %k : tensor<1024xi32, #d>
    %h5 = arith.xori %h4, %k : tensor<1024xi32, #d>
    %h6 = arith.muli %h5, %k : tensor<1024xi32, #d>
    %h7 = arith.xori %h6, %k : tensor<1024xi32, #d>
    %h8 = arith.muli %h7, %k : tensor<1024xi32, #d>
    %h9 = arith.xori %h8, %k : tensor<1024xi32, #d>
    %h10 = arith.muli %h9, %k : tensor<1024xi32, #d>
    %h11 = arith.xori %h10, %k : tensor<1024xi32, #d>
    %h12 = arith.muli %h11, %k : tensor<1024xi32, #d>
    %h13 = arith.xori %h12, %k : tensor<1024xi32, #d>
    %h14 = arith.muli %h13, %k : tensor<1024xi32, #d>
    %h15 = arith.xori %h14, %k : tensor<1024xi32, #d>
    %h16 = arith.muli %h15, %k : tensor<1024xi32, #d>
    %h17 = arith.xori %h16, %k : tensor<1024xi32, #d>
    %h18 = arith.muli %h17, %k : tensor<1024xi32, #d>
    %h19 = arith.xori %h18, %k : tensor<1024xi32, #d>
    %h20 = arith.muli %h19, %k : tensor<1024xi32, #d>
    %h21 = arith.xori %h20, %k : tensor<1024xi32, #d>
    %h22 = arith.muli %h21, %k : tensor<1024xi32, #d>
    %h23 = arith.xori %h22, %k : tensor<1024xi32, #d>
    %h24 = arith.muli %h23, %k : tensor<1024xi32, #d>
    %h25 = arith.xori %h24, %k : tensor<1024xi32, #d>
    %h26 = arith.muli %h25, %k : tensor<1024xi32, #d>
    %h27 = arith.xori %h26, %k : tensor<1024xi32, #d>
    %h28 = arith.muli %h27, %k : tensor<1024xi32, #d>
    %h29 = arith.xori %h28, %k : tensor<1024xi32, #d>
    %h30 = arith.muli %h29, %k : tensor<1024xi32, #d>
    %h31 = arith.xori %h30, %k : tensor<1024xi32, #d>
    %h32 = arith.muli %h31, %k : tensor<1024xi32, #d>
    %h33 = arith.xori %h32, %k : tensor<1024xi32, #d>
    %h34 = arith.muli %h33, %k : tensor<1024xi32, #d>
    %h35 = arith.xori %h34, %k : tensor<1024xi32, #d>
    %h36 = arith.muli %h35, %k : tensor<1024xi32, #d>
    %h37 = arith.xori %h36, %k : tensor<1024xi32, #d>
    %h38 = arith.muli %h37, %k : tensor<1024xi32, #d>
    %h39 = arith.xori %h38, %k : tensor<1024xi32, #d>
    %h40 = arith.muli %h39, %k : tensor<1024xi32, #d>
    %h41 = arith.xori %h40, %k : tensor<1024xi32, #d>
    %h42 = arith.muli %h41, %k : tensor<1024xi32, #d>
    %h43 = arith.xori %h42, %k : tensor<1024xi32, #d>
    %h44 = arith.muli %h43, %k : tensor<1024xi32, #d>
    %h45 = arith.xori %h44, %k : tensor<1024xi32, #d>
    %h46 = arith.muli %h45, %k : tensor<1024xi32, #d>
    %h47 = arith.xori %h46, %k : tensor<1024xi32, #d>
    %h48 = arith.muli %h47, %k : tensor<1024xi32, #d>
    %h49 = arith.xori %h48, %k : tensor<1024xi32, #d>
    %h50 = arith.muli %h49, %k : tensor<1024xi32, #d>
    %h51 = arith.xori %h50, %k : tensor<1024xi32, #d>
    %h52 = arith.muli %h51, %k : tensor<1024xi32, #d>
    %h53 = arith.xori %h52, %k : tensor<1024xi32, #d>
    %h54 = arith.muli %h53, %k : tensor<1024xi32, #d>
    %h55 = arith.xori %h54, %k : tensor<1024xi32, #d>
    %h56 = arith.muli %h55, %k : tensor<1024xi32, #d>
    %h57 = arith.xori %h56, %k : tensor<1024xi32, #d>
    %h58 = arith.muli %h57, %k : tensor<1024xi32, #d>
    %h59 = arith.xori %h58, %k : tensor<1024xi32, #d>
    %h60 = arith.muli %h59, %k : tensor<1024xi32, #d>
    %h61 = arith.xori %h60, %k : tensor<1024xi32, #d>
    %h62 = arith.muli %h61, %k : tensor<1024xi32, #d>
    %h63 = arith.xori %h62, %k : tensor<1024xi32, #d>
    %h64 = arith.muli %h63, %k : tensor<1024xi32, #d>
    %h65 = arith.xori %h64, %k : tensor<1024xi32, #d>
    %h66 = arith.muli %h65, %k : tensor<1024xi32, #d>
    %h67 = arith.xori %h66, %k : tensor<1024xi32, #d>
    %h68 = arith.muli %h67, %k : tensor<1024xi32, #d>
    %h69 = arith.xori %h68, %k : tensor<1024xi32, #d>
    %hv = ttg.convert_layout %h69 : tensor<1024xi32, #d> -> tensor<1024xi32, #v>
    %ps = tt.splat %p : !tt.ptr<i32> -> tensor<1024x!tt.ptr<i32>, #v>
    %vr = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #v>
    %ptrs = tt.addptr %ps, %vr : tensor<1024x!tt.ptr<i32>, #v>, tensor<1024xi32, #v>
    tt.store %ptrs, %hv : tensor<1024x!tt.ptr<i32>, #v>, tensor<1024xi32, #v>
    %hw = ttg.convert_layout %h69 : tensor<1024xi32, #d> -> tensor<1024xi32, #w>
    %qs = tt.splat %q : !tt.ptr<i32> -> tensor<1024x!tt.ptr<i32>, #w>
    %wr = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #w>
    %qtrs = tt.addptr %qs, %wr : tensor<1024x!tt.ptr<i32>, #w>, tensor<1024xi32, #w>
    tt.store %qtrs, %hw : tensor<1024x!tt.ptr<i32>, #w>, tensor<1024xi32, #w>
    func.return
  }
}
