// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Cache hints a load or store cannot have are rejected by the verifiers, naming the allowed ones.

// CHECK: error: tt.load: unknown cache modifier 'wb' (expected one of ca, cg, cs, cv)
func.func @store_modifier_on_a_load(%p: !tt.ptr<f32>) {
  %v = tt.load %p cacheModifier = wb : !tt.ptr<f32> -> f32
  func.return
}

// -----

// CHECK: error: tt.store: unknown cache modifier 'cv' (expected one of wb, cg, cs, wt)
func.func @load_modifier_on_a_store(%p: !tt.ptr<f32>, %v: f32) {
  tt.store %p, %v cacheModifier = cv : !tt.ptr<f32>, f32
  func.return
}

// -----

// CHECK: error: tt.load: unknown eviction policy 'evict_never' (expected one of evict_first, evict_last)
func.func @bad_policy(%p: !tt.ptr<f32>) {
  %v = tt.load %p evictionPolicy = evict_never : !tt.ptr<f32> -> f32
  func.return
}

// -----

// CHECK: error: tt.store: only loads can be volatile
func.func @volatile_store(%p: !tt.ptr<f32>, %v: f32) {
  tt.store %p, %v {isVolatile = true} : !tt.ptr<f32>, f32
  func.return
}
