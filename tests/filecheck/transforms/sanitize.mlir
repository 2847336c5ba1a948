// RUN: tile-opt -p sanitize %s --split-input-file | filecheck %s
// RUN: tile-opt -p sanitize %s --split-input-file | tile-opt --split-input-file | filecheck %s --check-prefix=ROUNDTRIP
// RUN: tile-opt -p 'sanitize,canonicalize,cse,dce,convert-to-ttgir{num-warps=4 threads-per-warp=32},coalesce,remove-layout-conversions' %s --split-input-file | filecheck %s --check-prefix=TTGIR
// sanitize: each access is checked against the storage bounds (hidden i64 arguments lo, hi per
// pointer argument, then the !tt.ptr<i64> error record) of the argument its pointer came from
// (byte addresses: lo <= address <= hi - element bytes);
// the mask limits the check; the access's location (file:line:col) goes into the report. The access itself
// then skips the lanes found outside (its mask becomes mask & inside), so it cannot crash.

// A tile of pointers `addptr(splat(p), offsets)` is checked on its offsets, in their own type:
// first = ceil((lo - p) / 4), last = floor((hi - 4 - p) / 4), clamped to i32. The report gets
// each lane's element offset from the argument (LLVM computes it only where one is reported).
// CHECK-LABEL: func.func @masked_load(%p: !tt.ptr<f32>, %n: i32, %0: i64, %1: i64, %2: !tt.ptr<i64>)
// CHECK:         %ptrs = tt.addptr %ps, %r
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[P:.*]] = tt.ptr_to_int %p : !tt.ptr<f32> -> i64
// CHECK-NEXT:    %[[LOP:.*]] = arith.subi %0, %[[P]] : i64
// CHECK-NEXT:    %[[THREE:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    %[[UP:.*]] = arith.addi %[[LOP]], %[[THREE]] : i64
// CHECK-NEXT:    %[[FIRST:.*]] = arith.shrsi %[[UP]], %[[TWO]] : i64
// CHECK-NEXT:    %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK-NEXT:    %[[END:.*]] = arith.subi %1, %[[FOUR]] : i64
// CHECK-NEXT:    %[[ENDP:.*]] = arith.subi %[[END]], %[[P]] : i64
// CHECK-NEXT:    %[[LAST:.*]] = arith.shrsi %[[ENDP]], %[[TWO]] : i64
// CHECK-NEXT:    %[[MIN:.*]] = arith.constant -2147483648 : i64
// CHECK-NEXT:    %[[MAX:.*]] = arith.constant 2147483647 : i64
// CHECK-NEXT:    %[[F1:.*]] = arith.maxsi %[[FIRST]], %[[MIN]] : i64
// CHECK-NEXT:    %[[F2:.*]] = arith.minsi %[[F1]], %[[MAX]] : i64
// CHECK-NEXT:    %[[F32:.*]] = arith.trunci %[[F2]] : i64 to i32
// CHECK-NEXT:    %[[L1:.*]] = arith.maxsi %[[LAST]], %[[MIN]] : i64
// CHECK-NEXT:    %[[L2:.*]] = arith.minsi %[[L1]], %[[MAX]] : i64
// CHECK-NEXT:    %[[L32:.*]] = arith.trunci %[[L2]] : i64 to i32
// CHECK-NEXT:    %[[FS:.*]] = tt.splat %[[F32]] : i32 -> tensor<64xi32>
// CHECK-NEXT:    %[[BELOW:.*]] = arith.cmpi slt, %r, %[[FS]] : tensor<64xi32>
// CHECK-NEXT:    %[[LS:.*]] = tt.splat %[[L32]] : i32 -> tensor<64xi32>
// CHECK-NEXT:    %[[ABOVE:.*]] = arith.cmpi sgt, %r, %[[LS]] : tensor<64xi32>
// CHECK-NEXT:    %[[OUT:.*]] = arith.ori %[[BELOW]], %[[ABOVE]] : tensor<64xi1>
// CHECK-NEXT:    %[[BAD:.*]] = arith.andi %[[OUT]], %m : tensor<64xi1>
// CHECK-NEXT:    %[[TWO2:.*]] = arith.constant 2 : i64
// CHECK-NEXT:    %[[ARG:.*]] = tt.ptr_to_int %p : !tt.ptr<f32> -> i64
// CHECK-NEXT:    %[[BASE:.*]] = tt.ptr_to_int %p : !tt.ptr<f32> -> i64
// CHECK-NEXT:    %[[DELTA:.*]] = arith.subi %[[BASE]], %[[ARG]] : i64
// CHECK-NEXT:    %[[START:.*]] = arith.shrsi %[[DELTA]], %[[TWO2]] : i64
// CHECK-NEXT:    %[[OFF64:.*]] = arith.extsi %r : tensor<64xi32> to tensor<64xi64>
// CHECK-NEXT:    %[[STARTS:.*]] = tt.splat %[[START]] : i64 -> tensor<64xi64>
// CHECK-NEXT:    %[[OFFSETS:.*]] = arith.addi %[[OFF64]], %[[STARTS]] : tensor<64xi64>
// CHECK-NEXT:    tt.sanitizer_report %[[BAD]], %[[OFFSETS]], %2 {site = 0 : i32, kind = "load", loc = "k.py:7:9", arg = 0 : i32} : tensor<64xi1>, tensor<64xi64>, !tt.ptr<i64>
// CHECK-NEXT:    %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:    %[[TRUES:.*]] = tt.splat %[[TRUE]] : i1 -> tensor<64xi1>
// CHECK-NEXT:    %[[IN:.*]] = arith.xori %[[OUT]], %[[TRUES]] : tensor<64xi1>
// CHECK-NEXT:    %[[KEEP:.*]] = arith.andi %[[IN]], %m : tensor<64xi1>
// CHECK-NEXT:    %x = tt.load %ptrs mask %[[KEEP]] : tensor<64x!tt.ptr<f32>> -> tensor<64xf32>
// TTGIR-LABEL: func.func @masked_load
// TTGIR:         tt.sanitizer_report {{.*}} : tensor<64xi1, #ttg.blocked<{{.*}}>>, tensor<64xi64, #ttg.blocked<{{.*}}>>, !tt.ptr<i64>
func.func @masked_load(%p: !tt.ptr<f32>, %n: i32) {
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ns = tt.splat %n : i32 -> tensor<64xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<64xi32>
  %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
  %ptrs = tt.addptr %ps, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
  %x = tt.load %ptrs mask %m : tensor<64x!tt.ptr<f32>> -> tensor<64xf32> loc("k.py":7:8)
  func.return
}

// -----

// A pointer advanced in a loop still belongs to its argument (the second: bounds %2, %3); a
// scalar store is checked on its byte address, and reports its element offset from %b.
// CHECK-LABEL: func.func @loop_carried(%a: !tt.ptr<f16>, %b: !tt.ptr<f16>, %v: f16, %0: i64, %1: i64, %2: i64, %3: i64, %4: !tt.ptr<i64>)
// CHECK:         scf.for
// CHECK:           %[[ADDR:.*]] = tt.ptr_to_int %q : !tt.ptr<f16> -> i64
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : i64
// CHECK-NEXT:      %[[LIMIT:.*]] = arith.subi %3, %[[TWO]] : i64
// CHECK-NEXT:      %[[BELOW:.*]] = arith.cmpi slt, %[[ADDR]], %2 : i64
// CHECK-NEXT:      %[[ABOVE:.*]] = arith.cmpi sgt, %[[ADDR]], %[[LIMIT]] : i64
// CHECK-NEXT:      %[[BAD:.*]] = arith.ori %[[BELOW]], %[[ABOVE]] : i1
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      %[[B:.*]] = tt.ptr_to_int %b : !tt.ptr<f16> -> i64
// CHECK-NEXT:      %[[DELTA:.*]] = arith.subi %[[ADDR]], %[[B]] : i64
// CHECK-NEXT:      %[[OFFSET:.*]] = arith.shrsi %[[DELTA]], %[[ONE]] : i64
// CHECK-NEXT:      tt.sanitizer_report %[[BAD]], %[[OFFSET]], %4 {site = 0 : i32, kind = "store", loc = "", arg = 1 : i32} : i1, i64, !tt.ptr<i64>
// CHECK-NEXT:      %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:      %[[IN:.*]] = arith.xori %[[BAD]], %[[TRUE]] : i1
// CHECK-NEXT:      tt.store %q, %v mask %[[IN]] : !tt.ptr<f16>, f16
func.func @loop_carried(%a: !tt.ptr<f16>, %b: !tt.ptr<f16>, %v: f16) {
  %lb = arith.constant 0 : i32
  %ub = arith.constant 8 : i32
  %st = arith.constant 1 : i32
  %end = scf.for %i = %lb to %ub step %st iter_args(%q = %b) -> (!tt.ptr<f16>) : i32 {
    tt.store %q, %v : !tt.ptr<f16>, f16
    %next = tt.addptr %q, %st : !tt.ptr<f16>, i32
    scf.yield %next : !tt.ptr<f16>
  }
  func.return
}

// -----

// A pointer that may come from either argument is checked against both (arg = -1); the report
// gets the address.
// CHECK-LABEL: func.func @either(
// CHECK:         %[[ADDR:.*]] = tt.ptr_to_int %p : !tt.ptr<i32> -> i64
// CHECK:         %[[OUT0:.*]] = arith.ori
// CHECK:         %[[OUT1:.*]] = arith.ori
// CHECK-NEXT:    %[[BAD:.*]] = arith.andi %[[OUT0]], %[[OUT1]] : i1
// CHECK-NEXT:    tt.sanitizer_report %[[BAD]], %[[ADDR]], %4 {site = 0 : i32, kind = "load", loc = "", arg = -1 : i32}
func.func @either(%a: !tt.ptr<i32>, %b: !tt.ptr<i32>, %c: i1) {
  %p = arith.select %c, %a, %b : !tt.ptr<i32>
  %x = tt.load %p : !tt.ptr<i32> -> i32
  func.return
}

// -----

// Integer division: the divisor must not be 0 where the masked load it came from was enabled
// (masked-off lanes hold `other`); the report's value is the element's index in the tile.
// Division by a nonzero constant is not checked; a splat divisor is checked once, as a scalar.
// CHECK-LABEL: func.func @division
// CHECK:         %d = tt.load %ptrs mask %[[DMASK:[0-9]+]] other %zero
// CHECK-NEXT:    %x = arith.addi %r, %r
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[ZS:.*]] = tt.splat %[[Z]] : i32 -> tensor<64xi32>
// CHECK-NEXT:    %[[EQ:.*]] = arith.cmpi eq, %d, %[[ZS]] : tensor<64xi32>
// CHECK-NEXT:    %[[BAD:.*]] = arith.andi %[[EQ]], %[[DMASK]] : tensor<64xi1>
// CHECK-NEXT:    %[[IDX:.*]] = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
// CHECK-NEXT:    %[[IDX64:.*]] = arith.extsi %[[IDX]] : tensor<64xi32> to tensor<64xi64>
// CHECK-NEXT:    tt.sanitizer_report %[[BAD]], %[[IDX64]], %2 {site = 1 : i32, kind = "div", loc = "k.py:9:13", arg = -1 : i32}
// CHECK-NEXT:    %q = arith.divsi %x, %d {tt.divisibility = array<i32: 1>} : tensor<64xi32>
// CHECK-NEXT:    %seven = arith.constant 7 : i32
// CHECK-NEXT:    %sevens = tt.splat %seven
// CHECK-NEXT:    %by_constant = arith.remsi %x, %sevens : tensor<64xi32>
// CHECK-NEXT:    %[[SZ:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[SBAD:.*]] = arith.cmpi eq, %n, %[[SZ]] : i32
// CHECK-NEXT:    %[[SIDX:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    tt.sanitizer_report %[[SBAD]], %[[SIDX]], %2 {site = 2 : i32, kind = "rem", loc = "", arg = -1 : i32} : i1, i64, !tt.ptr<i64>
// CHECK-NEXT:    %by_n = arith.remsi %x, %ns : tensor<64xi32>
func.func @division(%p: !tt.ptr<i32>, %n: i32) {
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ns = tt.splat %n : i32 -> tensor<64xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<64xi32>
  %ps = tt.splat %p : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>>
  %ptrs = tt.addptr %ps, %r : tensor<64x!tt.ptr<i32>>, tensor<64xi32>
  %zero = arith.constant dense<0> : tensor<64xi32>
  %d = tt.load %ptrs mask %m other %zero : tensor<64x!tt.ptr<i32>> -> tensor<64xi32>
  %x = arith.addi %r, %r : tensor<64xi32>
  %q = arith.divsi %x, %d {tt.divisibility = array<i32: 1>} : tensor<64xi32> loc("k.py":9:12)
  %seven = arith.constant 7 : i32
  %sevens = tt.splat %seven : i32 -> tensor<64xi32>
  %by_constant = arith.remsi %x, %sevens : tensor<64xi32>
  %by_n = arith.remsi %x, %ns : tensor<64xi32>
  %s = arith.addi %q, %by_constant : tensor<64xi32>
  %t = arith.addi %s, %by_n : tensor<64xi32>
  func.return
}

// -----

// A quotient that only `tl.where`s keep (conditions computed before the division) is checked on the
// lanes they keep: the true side where the condition holds, the false side where it does not.
// CHECK-LABEL: func.func @guarded_division
// CHECK:         %[[EQ:[0-9]+]] = arith.cmpi eq, %d, %{{[0-9]+}} : tensor<64xi32>
// CHECK-NEXT:    %[[LOADED:[0-9]+]] = arith.andi %[[EQ]], %{{[0-9]+}} : tensor<64xi1>
// CHECK-NEXT:    %[[BAD:[0-9]+]] = arith.andi %[[LOADED]], %nonzero : tensor<64xi1>
// CHECK:         tt.sanitizer_report %[[BAD]], %{{.*}} {site = 1 : i32, kind = "div"
// CHECK-NEXT:    %q = arith.divsi %x, %d
// CHECK:         %[[EQ2:[0-9]+]] = arith.cmpi eq, %d, %{{[0-9]+}} : tensor<64xi32>
// CHECK-NEXT:    %[[LOADED2:[0-9]+]] = arith.andi %[[EQ2]], %{{[0-9]+}} : tensor<64xi1>
// CHECK:         %[[KEPT:[0-9]+]] = arith.xori %iszero, %{{[0-9]+}} : tensor<64xi1>
// CHECK-NEXT:    %[[BAD2:[0-9]+]] = arith.andi %[[LOADED2]], %[[KEPT]] : tensor<64xi1>
// CHECK:         tt.sanitizer_report %[[BAD2]], %{{.*}} {site = 2 : i32, kind = "rem"
// CHECK-NEXT:    %m = arith.remsi %x, %d
func.func @guarded_division(%p: !tt.ptr<i32>) {
  %x = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ps = tt.splat %p : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>>
  %ptrs = tt.addptr %ps, %x : tensor<64x!tt.ptr<i32>>, tensor<64xi32>
  %d = tt.load %ptrs : tensor<64x!tt.ptr<i32>> -> tensor<64xi32>
  %zero = arith.constant dense<0> : tensor<64xi32>
  %nonzero = arith.cmpi ne, %d, %zero : tensor<64xi32>
  %iszero = arith.cmpi eq, %d, %zero : tensor<64xi32>
  %q = arith.divsi %x, %d : tensor<64xi32>
  %kept = arith.select %nonzero, %q, %zero : tensor<64xi1>, tensor<64xi32>
  %m = arith.remsi %x, %d : tensor<64xi32>
  %kept2 = arith.select %iszero, %zero, %m : tensor<64xi1>, tensor<64xi32>
  func.return
}

// ROUNDTRIP-LABEL: func.func @masked_load
// ROUNDTRIP:         tt.sanitizer_report %{{.*}}, %{{.*}}, %{{.*}} {site = 0 : i32, kind = "load", loc = "k.py:7:9", arg = 0 : i32} : tensor<64xi1>, tensor<64xi64>, !tt.ptr<i64>
