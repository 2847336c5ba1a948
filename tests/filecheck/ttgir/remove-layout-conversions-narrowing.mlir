// RUN: tile-opt -p remove-layout-conversions %s --split-input-file | filecheck %s
// Conversions moved above the broadcasts and extensions that feed them: the narrower value
// converts (fewer bytes through shared memory) and is broadcast or extended again in the
// wanted layout.

// A layer-norm backward's weight row: 1024 distinct values (more than the 128 threads, so
// not reloaded) broadcast over 8 rows. The [1, 1024] row converts, not the [8, 1024] tile.
// CHECK-LABEL: func.func @broadcast_row
// CHECK:         %w = tt.load %wptrs : tensor<1x1024x!tt.ptr<f32>, [[B:#ttg.blocked<\{sizePerThread = .1, 4.[^}]*\}>]]> -> tensor<1x1024xf32, [[B]]>
// CHECK-NEXT:    [[WA:%.*]] = ttg.convert_layout %w : tensor<1x1024xf32, [[B]]> -> tensor<1x1024xf32, [[A:#ttg.blocked<\{sizePerThread = .1, 16.[^}]*\}>]]>
// CHECK-NEXT:    [[WB:%.*]] = tt.broadcast [[WA]] : tensor<1x1024xf32, [[A]]> -> tensor<8x1024xf32, [[A]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %y = arith.mulf %x, [[WB]] : tensor<8x1024xf32, [[A]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         func.return
#a = #ttg.blocked<{sizePerThread = [1, 16], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @broadcast_row(%xptrs: tensor<8x1024x!tt.ptr<f32>, #a>, %w_ptr: !tt.ptr<f32>) {
    %x = tt.load %xptrs : tensor<8x1024x!tt.ptr<f32>, #a> -> tensor<8x1024xf32, #a>
    %cols = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #ttg.slice<{dim = 0, parent = #b}>>
    %cols2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<1024xi32, #ttg.slice<{dim = 0, parent = #b}>> -> tensor<1x1024xi32, #b>
    %wsplat = tt.splat %w_ptr : !tt.ptr<f32> -> tensor<1x1024x!tt.ptr<f32>, #b>
    %wptrs = tt.addptr %wsplat, %cols2 : tensor<1x1024x!tt.ptr<f32>, #b>, tensor<1x1024xi32, #b>
    %w = tt.load %wptrs : tensor<1x1024x!tt.ptr<f32>, #b> -> tensor<1x1024xf32, #b>
    %wb = tt.broadcast %w : tensor<1x1024xf32, #b> -> tensor<8x1024xf32, #b>
    %wa = ttg.convert_layout %wb : tensor<8x1024xf32, #b> -> tensor<8x1024xf32, #a>
    %y = arith.mulf %x, %wa : tensor<8x1024xf32, #a>
    tt.store %xptrs, %y : tensor<8x1024x!tt.ptr<f32>, #a>, tensor<8x1024xf32, #a>
    func.return
  }
}

// -----

// An fp16 tile extended to fp32 converts as fp16 (half the bytes: in sm_90 PTX 24 shared
// accesses instead of 32 for this pair of layouts), then extends in the wanted layout.
// CHECK-LABEL: func.func @extension
// CHECK:         %h = tt.load %hptrs : tensor<8x1024x!tt.ptr<f16>, [[B:#ttg.blocked<\{sizePerThread = .1, 4.[^}]*\}>]]> -> tensor<8x1024xf16, [[B]]>
// CHECK-NEXT:    [[HA:%.*]] = ttg.convert_layout %h : tensor<8x1024xf16, [[B]]> -> tensor<8x1024xf16, [[A:#ttg.blocked<\{sizePerThread = .1, 16.[^}]*\}>]]>
// CHECK-NEXT:    [[HF:%.*]] = arith.extf [[HA]] : tensor<8x1024xf16, [[A]]> to tensor<8x1024xf32, [[A]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %y = arith.mulf %x, [[HF]] : tensor<8x1024xf32, [[A]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         func.return
#a = #ttg.blocked<{sizePerThread = [1, 16], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @extension(%xptrs: tensor<8x1024x!tt.ptr<f32>, #a>, %hptrs: tensor<8x1024x!tt.ptr<f16>, #b>) {
    %x = tt.load %xptrs : tensor<8x1024x!tt.ptr<f32>, #a> -> tensor<8x1024xf32, #a>
    %h = tt.load %hptrs : tensor<8x1024x!tt.ptr<f16>, #b> -> tensor<8x1024xf16, #b>
    %hf = arith.extf %h : tensor<8x1024xf16, #b> to tensor<8x1024xf32, #b>
    %ha = ttg.convert_layout %hf : tensor<8x1024xf32, #b> -> tensor<8x1024xf32, #a>
    %y = arith.mulf %x, %ha : tensor<8x1024xf32, #a>
    tt.store %xptrs, %y : tensor<8x1024x!tt.ptr<f32>, #a>, tensor<8x1024xf32, #a>
    func.return
  }
}

// -----

// A product of two broadcasts, neither of them rebuildable: moving the conversion up would take
// two, so the one conversion of the product stays.
// CHECK-LABEL: func.func @two_operands
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %p = arith.mulf %rb, %cb : tensor<8x1024xf32, [[B:#ttg.blocked<\{sizePerThread = .1, 4.[^}]*\}>]]>
// CHECK-NEXT:    %pa = ttg.convert_layout %p : tensor<8x1024xf32, [[B]]> -> tensor<8x1024xf32, [[A:#ttg.blocked<\{sizePerThread = .1, 16.[^}]*\}>]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         func.return
#a = #ttg.blocked<{sizePerThread = [1, 16], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @two_operands(%xptrs: tensor<8x1024x!tt.ptr<f32>, #a>, %rptrs: tensor<8x1x!tt.ptr<f32>, #b>, %cptrs: tensor<1x1024x!tt.ptr<f32>, #b>) {
    %x = tt.load %xptrs : tensor<8x1024x!tt.ptr<f32>, #a> -> tensor<8x1024xf32, #a>
    %r = tt.load %rptrs : tensor<8x1x!tt.ptr<f32>, #b> -> tensor<8x1xf32, #b>
    %c = tt.load %cptrs : tensor<1x1024x!tt.ptr<f32>, #b> -> tensor<1x1024xf32, #b>
    %rb = tt.broadcast %r : tensor<8x1xf32, #b> -> tensor<8x1024xf32, #b>
    %cb = tt.broadcast %c : tensor<1x1024xf32, #b> -> tensor<8x1024xf32, #b>
    %p = arith.mulf %rb, %cb : tensor<8x1024xf32, #b>
    %pa = ttg.convert_layout %p : tensor<8x1024xf32, #b> -> tensor<8x1024xf32, #a>
    %y = arith.mulf %x, %pa : tensor<8x1024xf32, #a>
    tt.store %xptrs, %y : tensor<8x1024x!tt.ptr<f32>, #a>, tensor<8x1024xf32, #a>
    func.return
  }
}

// -----

// The exponential of the broadcast row is stored too: moving the conversion above the broadcast
// would compute the [8, 1024] exponential twice (8192 elements) to move 7168 fewer words through
// shared memory, so the conversion stays where it is.
// CHECK-LABEL: func.func @recomputed
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %e = math.exp %wb : tensor<8x1024xf32, [[B:#ttg.blocked<\{sizePerThread = .1, 4.[^}]*\}>]]>
// CHECK:         %ea = ttg.convert_layout %e : tensor<8x1024xf32, [[B]]> -> tensor<8x1024xf32, [[A:#ttg.blocked<\{sizePerThread = .1, 16.[^}]*\}>]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         func.return
#a = #ttg.blocked<{sizePerThread = [1, 16], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @recomputed(%xptrs: tensor<8x1024x!tt.ptr<f32>, #a>, %eptrs: tensor<8x1024x!tt.ptr<f32>, #b>, %cptrs: tensor<1x1024x!tt.ptr<f32>, #b>) {
    %x = tt.load %xptrs : tensor<8x1024x!tt.ptr<f32>, #a> -> tensor<8x1024xf32, #a>
    %w = tt.load %cptrs : tensor<1x1024x!tt.ptr<f32>, #b> -> tensor<1x1024xf32, #b>
    %wb = tt.broadcast %w : tensor<1x1024xf32, #b> -> tensor<8x1024xf32, #b>
    %e = math.exp %wb : tensor<8x1024xf32, #b>
    tt.store %eptrs, %e : tensor<8x1024x!tt.ptr<f32>, #b>, tensor<8x1024xf32, #b>
    %ea = ttg.convert_layout %e : tensor<8x1024xf32, #b> -> tensor<8x1024xf32, #a>
    %y = arith.mulf %x, %ea : tensor<8x1024xf32, #a>
    tt.store %xptrs, %y : tensor<8x1024x!tt.ptr<f32>, #a>, tensor<8x1024xf32, #a>
    func.return
  }
}

// -----

// A layer norm's end with fp32 weight and bias: the normalized fp16 rows (in the loads' layout #a)
// meet the weight and bias rows broadcast in #b, and the result is stored from #a. Moving the
// product and sum to #a takes two conversions as the plan removes, but each of the [1, 1024]
// rows, broadcast after the conversion: the plan counts their share of the bytes (1/8 each), so
// the rows convert and no [8, 1024] tile does.
// CHECK-LABEL: func.func @rows_meet_tile
// CHECK-NOT:     ttg.convert_layout {{.*}} tensor<8x1024
// CHECK-DAG:     ttg.convert_layout %w : tensor<1x1024xf32, [[B:#ttg.blocked<\{sizePerThread = .1, 4.[^}]*\}>]]> -> tensor<1x1024xf32, [[A:#ttg.blocked<\{sizePerThread = .1, 8.[^}]*\}>]]>
// CHECK-DAG:     ttg.convert_layout %b : tensor<1x1024xf32, [[B]]> -> tensor<1x1024xf32, [[A]]>
// CHECK:         %y = arith.mulf %n, {{.*}} : tensor<8x1024xf32, [[A]]>
// CHECK:         %z = arith.addf %y, {{.*}} : tensor<8x1024xf32, [[A]]>
// CHECK-NEXT:    %h = arith.truncf %z : tensor<8x1024xf32, [[A]]> to tensor<8x1024xf16, [[A]]>
// CHECK-NEXT:    tt.store %xptrs, %h
// CHECK-NOT:     ttg.convert_layout
#a = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @rows_meet_tile(%xptrs: tensor<8x1024x!tt.ptr<f16>, #a>, %wptrs: tensor<1x1024x!tt.ptr<f32>, #b>, %bptrs: tensor<1x1024x!tt.ptr<f32>, #b>) {
    %x = tt.load %xptrs : tensor<8x1024x!tt.ptr<f16>, #a> -> tensor<8x1024xf16, #a>
    %xf = arith.extf %x : tensor<8x1024xf16, #a> to tensor<8x1024xf32, #a>
    %n = arith.mulf %xf, %xf : tensor<8x1024xf32, #a>
    %w = tt.load %wptrs : tensor<1x1024x!tt.ptr<f32>, #b> -> tensor<1x1024xf32, #b>
    %b = tt.load %bptrs : tensor<1x1024x!tt.ptr<f32>, #b> -> tensor<1x1024xf32, #b>
    %nb = ttg.convert_layout %n : tensor<8x1024xf32, #a> -> tensor<8x1024xf32, #b>
    %wb = tt.broadcast %w : tensor<1x1024xf32, #b> -> tensor<8x1024xf32, #b>
    %y = arith.mulf %nb, %wb : tensor<8x1024xf32, #b>
    %bb = tt.broadcast %b : tensor<1x1024xf32, #b> -> tensor<8x1024xf32, #b>
    %z = arith.addf %y, %bb : tensor<8x1024xf32, #b>
    %h = arith.truncf %z : tensor<8x1024xf32, #b> to tensor<8x1024xf16, #b>
    %ha = ttg.convert_layout %h : tensor<8x1024xf16, #b> -> tensor<8x1024xf16, #a>
    tt.store %xptrs, %ha : tensor<8x1024x!tt.ptr<f16>, #a>, tensor<8x1024xf16, #a>
    func.return
  }
}

// -----

// Pointers built from a reshaped range (a reshape is not rebuilt) and converted to the load's
// layout: the i32 offsets convert (4 bytes an element, not 8), and the splat of the base pointer
// and the addptr are rebuilt in the load's layout; the pointer tile in #b dies.
// CHECK-LABEL: func.func @pointer_offsets
// CHECK:         %offs = tt.reshape %r : tensor<1024xi32, {{.*}}> -> tensor<8x128xi32, [[B:#ttg.blocked<\{sizePerThread = .1, 1.[^}]*\}>]]>
// CHECK-NEXT:    [[OA:%.*]] = ttg.convert_layout %offs : tensor<8x128xi32, [[B]]> -> tensor<8x128xi32, [[A:#ttg.blocked<\{sizePerThread = .1, 4.[^}]*\}>]]>
// CHECK-NEXT:    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<8x128x!tt.ptr<f32>, [[A]]>
// CHECK-NEXT:    %ptrs = tt.addptr %ps, [[OA]] : tensor<8x128x!tt.ptr<f32>, [[A]]>, tensor<8x128xi32, [[A]]>
// CHECK-NEXT:    %x = tt.load %ptrs : tensor<8x128x!tt.ptr<f32>, [[A]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         func.return
#d = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#a = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @pointer_offsets(%p: !tt.ptr<f32>, %yptrs: tensor<8x128x!tt.ptr<f32>, #a>) {
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #d>
    %offs = tt.reshape %r : tensor<1024xi32, #d> -> tensor<8x128xi32, #b>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<8x128x!tt.ptr<f32>, #b>
    %ptrs = tt.addptr %ps, %offs : tensor<8x128x!tt.ptr<f32>, #b>, tensor<8x128xi32, #b>
    %pa = ttg.convert_layout %ptrs : tensor<8x128x!tt.ptr<f32>, #b> -> tensor<8x128x!tt.ptr<f32>, #a>
    %x = tt.load %pa : tensor<8x128x!tt.ptr<f32>, #a> -> tensor<8x128xf32, #a>
    tt.store %yptrs, %x : tensor<8x128x!tt.ptr<f32>, #a>, tensor<8x128xf32, #a>
    func.return
  }
}

// -----

// 64-bit offsets (reshaped after the extension: no i32 value to convert) are as wide as the
// pointers, and pointers that are a function argument cannot be rebuilt: both pointer conversions
// stay.
// CHECK-LABEL: func.func @pointer_offsets_kept
// CHECK:         %pa = ttg.convert_layout %ptrs : tensor<8x128x!tt.ptr<f32>, [[B:#ttg.blocked<\{sizePerThread = .1, 1.[^}]*\}>]]> -> tensor<8x128x!tt.ptr<f32>, [[A:#ttg.blocked<\{sizePerThread = .1, 4.[^}]*\}>]]>
// CHECK:         %qa = ttg.convert_layout %qptrs : tensor<8x128x!tt.ptr<f32>, [[B]]> -> tensor<8x128x!tt.ptr<f32>, [[A]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         func.return
#d = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#a = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#b = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func @pointer_offsets_kept(%p: !tt.ptr<f32>, %qs: tensor<8x128x!tt.ptr<f32>, #b>, %yptrs: tensor<8x128x!tt.ptr<f32>, #a>) {
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #d>
    %offs = tt.reshape %r : tensor<1024xi32, #d> -> tensor<8x128xi32, #b>
    %r64 = arith.extsi %r : tensor<1024xi32, #d> to tensor<1024xi64, #d>
    %wide = tt.reshape %r64 : tensor<1024xi64, #d> -> tensor<8x128xi64, #b>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<8x128x!tt.ptr<f32>, #b>
    %ptrs = tt.addptr %ps, %wide : tensor<8x128x!tt.ptr<f32>, #b>, tensor<8x128xi64, #b>
    %pa = ttg.convert_layout %ptrs : tensor<8x128x!tt.ptr<f32>, #b> -> tensor<8x128x!tt.ptr<f32>, #a>
    %x = tt.load %pa : tensor<8x128x!tt.ptr<f32>, #a> -> tensor<8x128xf32, #a>
    %qptrs = tt.addptr %qs, %offs : tensor<8x128x!tt.ptr<f32>, #b>, tensor<8x128xi32, #b>
    %qa = ttg.convert_layout %qptrs : tensor<8x128x!tt.ptr<f32>, #b> -> tensor<8x128x!tt.ptr<f32>, #a>
    %y = tt.load %qa : tensor<8x128x!tt.ptr<f32>, #a> -> tensor<8x128xf32, #a>
    %z = arith.addf %x, %y : tensor<8x128xf32, #a>
    tt.store %yptrs, %z : tensor<8x128x!tt.ptr<f32>, #a>, tensor<8x128xf32, #a>
    func.return
  }
}
