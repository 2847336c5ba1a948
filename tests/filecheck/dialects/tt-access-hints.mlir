// RUN: tile-opt %s | tile-opt | filecheck %s
// Cache hints of tt.load / tt.store print and parse back as Triton writes them: the cache modifier and
// the eviction policy after the operands, isVolatile in the attribute dictionary; no hint, no text.

func.func public @hints(%p: !tt.ptr<f32>, %n: i32) {
  %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %pp = tt.addptr %ps, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %s = tt.splat %n : i32 -> tensor<128xi32>
  %m = arith.cmpi slt, %r, %s : tensor<128xi32>
  %v0 = tt.load %pp cacheModifier = cg : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %v1 = tt.load %pp mask %m cacheModifier = cv evictionPolicy = evict_last {isVolatile = true} : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %v2 = tt.load %pp evictionPolicy = evict_first : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  %v3 = tt.load %p {evict = "evict_last", cache = "ca"} : !tt.ptr<f32> -> f32
  %v4 = tt.load %pp : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
  tt.store %pp, %v1 mask %m cacheModifier = cs evictionPolicy = evict_first : tensor<128x!tt.ptr<f32>>, tensor<128xf32>
  tt.store %pp, %v2 cacheModifier = wt {tt.note = 1 : i32} : tensor<128x!tt.ptr<f32>>, tensor<128xf32>
  tt.store %p, %v3 : !tt.ptr<f32>, f32
  func.return
}

// CHECK:      %v0 = tt.load %pp cacheModifier = cg : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
// CHECK-NEXT: %v1 = tt.load %pp mask %m cacheModifier = cv evictionPolicy = evict_last {isVolatile = true} : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
// CHECK-NEXT: %v2 = tt.load %pp evictionPolicy = evict_first : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
// CHECK-NEXT: %v3 = tt.load %p cacheModifier = ca evictionPolicy = evict_last : !tt.ptr<f32> -> f32
// CHECK-NEXT: %v4 = tt.load %pp : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
// CHECK-NEXT: tt.store %pp, %v1 mask %m cacheModifier = cs evictionPolicy = evict_first : tensor<128x!tt.ptr<f32>>, tensor<128xf32>
// CHECK-NEXT: tt.store %pp, %v2 cacheModifier = wt {tt.note = 1 : i32} : tensor<128x!tt.ptr<f32>>, tensor<128xf32>
// CHECK-NEXT: tt.store %p, %v3 : !tt.ptr<f32>, f32
