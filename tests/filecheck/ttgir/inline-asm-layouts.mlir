// RUN: tile-opt -p 'convert-to-ttgir{num-warps=4 threads-per-warp=32},coalesce,remove-layout-conversions,cse,dce' %s | filecheck %s
// tt.elementwise_inline_asm is elementwise for the layout passes: between a coalesced load and
// coalesced stores (4 x i32 per thread, 16-byte aligned pointers) its operands and both its
// results take the memory layout, and no conversion is left.

// CHECK-LABEL: func.func @asm_between_vector_accesses
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %x = tt.load %{{.*}} -> tensor<512xi32, [[L:#ttg.blocked<\{sizePerThread = .4., threadsPerWarp = .32., warpsPerCTA = .4., order = .0.\}>]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         %lo, %hi = tt.elementwise_inline_asm "{ add.s32 $0, $2, $3; cvt.rn.f32.s32 $1, $2; }" {{.*}} %x, %ns : tensor<512xi32, [[L]]>, tensor<512xi32, [[L]]> -> tensor<512xi32, [[L]]>, tensor<512xf32, [[L]]>
// CHECK-NOT:     ttg.convert_layout
// CHECK:         tt.store {{.*}}, %lo
// CHECK:         tt.store {{.*}}, %hi
func.func @asm_between_vector_accesses(%p: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %q: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) {
  %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
  %ps = tt.splat %p : !tt.ptr<i32> -> tensor<512x!tt.ptr<i32>>
  %pp = tt.addptr %ps, %r : tensor<512x!tt.ptr<i32>>, tensor<512xi32>
  %x = tt.load %pp : tensor<512x!tt.ptr<i32>> -> tensor<512xi32>
  %ns = tt.splat %n : i32 -> tensor<512xi32>
  %lo, %hi = tt.elementwise_inline_asm "{ add.s32 $0, $2, $3; cvt.rn.f32.s32 $1, $2; }" {constraints = "=r,=f,r,r", packed_element = 1 : i32, pure = true} %x, %ns : tensor<512xi32>, tensor<512xi32> -> tensor<512xi32>, tensor<512xf32>
  tt.store %pp, %lo : tensor<512x!tt.ptr<i32>>, tensor<512xi32>
  %qs = tt.splat %q : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>>
  %qq = tt.addptr %qs, %r : tensor<512x!tt.ptr<f32>>, tensor<512xi32>
  tt.store %qq, %hi : tensor<512x!tt.ptr<f32>>, tensor<512xf32>
  func.return
}
