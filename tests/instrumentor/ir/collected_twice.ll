; A module collected twice: sampler-collect refuses a module that already has a unit (every other test's input but
; collect.ll's), and sampler-lower one whose markers name another unit's scheme table. Both stop with an error
; naming the module (status 1); before, the second collection added a second unit, and the lowering took the
; second unit's weights for the first's: on schemes.ll, whose unit (ABI version 2) has no thresholds' fields,
; it wrote past them (a segmentation fault, or "double free or corruption").
;
;   int twice(int x) { return 2 * x; }
;
; RUN: (%opt -load-pass-plugin=%passes -passes='sampler-collect,sampler-lower<O0>' -S %s -o /dev/null 2>&1; \
; RUN:  test $? -eq 1) | %FileCheck %s --check-prefix=COLLECT
; RUN: (%opt -load-pass-plugin=%passes -passes=sampler-collect -S %s -o /dev/null 2>&1; test $? -eq 1) \
; RUN:   | %FileCheck %s --check-prefix=COLLECT
; RUN: (%opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s -o /dev/null 2>&1; test $? -eq 1) \
; RUN:   | %FileCheck %s --check-prefix=LOWER
; RUN: (%opt -load-pass-plugin=%passes -passes=sampler-lower -S %s -o /dev/null 2>&1; test $? -eq 1) \
; RUN:   | %FileCheck %s --check-prefix=LOWER
;
; COLLECT:     {{^}}error: sampler: {{.*}}collected_twice.ll: already collected (it has @__sampler_unit): sampler-collect runs once, on a module without sites
; COLLECT-NOT: Stack dump
; LOWER:       {{^}}error: sampler: {{.*}}collected_twice.ll: a site marker names @__sampler_schemes.3, not @__sampler_schemes of @__sampler_unit: a module holds one unit
; LOWER-NOT:   Stack dump
;
; The input: collect.ll through `opt -passes=sampler-collect,sampler-collect` with the plugin from before the
; collection refused a collected module (its ModuleID line removed).

source_filename = "entry.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

module asm ".pushsection .debug_site_info,\22\22,@progbits"
module asm "\09.ascii \22<sites unit=\\\22a5e2a247b6cb686241892049904d2ae0\\\22 scheme=\\\22function-entries\\\22>\\n\22"
module asm "\09.ascii \22entry.c\\t1\\ttwice\\t0\\n\22"
module asm "\09.ascii \22</sites>\\n\22"
module asm ".popsection"
module asm ".pushsection .debug_site_info,\22\22,@progbits"
module asm "\09.ascii \22<sites unit=\\\22a5e2a247b6cb686241892049904d2ae0\\\22 scheme=\\\22function-entries\\\22>\\n\22"
module asm "\09.ascii \22entry.c\\t1\\ttwice\\t0\\n\22"
module asm "\09.ascii \22</sites>\\n\22"
module asm ".popsection"

@__sampler_values_function-entries = internal global [1 x i64] zeroinitializer
@__sampler_scheme_name = private unnamed_addr constant [17 x i8] c"function-entries\00"
@__sampler_schemes = internal global [1 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 1, i32 1, i32 0, i32 0, ptr @__sampler_values_function-entries, ptr null, ptr null, ptr null }]
@__sampler_signature = private constant [33 x i8] c"a5e2a247b6cb686241892049904d2ae0\00"
@__sampler_weights = internal global [1 x i64] [i64 1]
@__sampler_unit = internal global { i32, i32, ptr, ptr, ptr, i64, ptr, ptr, i32, i32, ptr, i32, i32 } { i32 4, i32 1, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0, ptr @__sampler_weights, ptr null, i32 1, i32 0, ptr null, i32 0, i32 0 }
@__sampler_values_function-entries.1 = internal global [1 x i64] zeroinitializer
@__sampler_scheme_name.2 = private unnamed_addr constant [17 x i8] c"function-entries\00"
@__sampler_schemes.3 = internal global [1 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name.2, i32 1, i32 1, i32 0, i32 0, ptr @__sampler_values_function-entries.1, ptr null, ptr null, ptr null }]
@__sampler_signature.4 = private constant [33 x i8] c"a5e2a247b6cb686241892049904d2ae0\00"
@__sampler_weights.5 = internal global [1 x i64] [i64 1]
@__sampler_unit.6 = internal global { i32, i32, ptr, ptr, ptr, i64, ptr, ptr, i32, i32, ptr, i32, i32 } { i32 4, i32 1, ptr @__sampler_signature.4, ptr @__sampler_schemes.3, ptr null, i64 0, ptr @__sampler_weights.5, ptr null, i32 1, i32 0, ptr null, i32 0, i32 0 }
@llvm.global_ctors = appending global [2 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }, { i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit.7, ptr null }]
@llvm.global_dtors = appending global [2 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit, ptr null }, { i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit.8, ptr null }]

; Function Attrs: nounwind uwtable
define dso_local i32 @twice(i32 noundef %0) #0 !dbg !5 {
  %2 = alloca i32, align 4
  call void (...) @__sampler.site.entry(ptr @__sampler_schemes.3, i1 false, i32 0), !dbg !8
  call void (...) @__sampler.site.entry(ptr @__sampler_schemes, i1 false, i32 0), !dbg !8
  store i32 %0, ptr %2, align 4
  %3 = load i32, ptr %2, align 4, !dbg !9
  %4 = mul nsw i32 2, %3, !dbg !10
  ret i32 %4, !dbg !11
}

declare void @sampler_register_unit(ptr)

; Function Attrs: nounwind
define internal void @__sampler_register_unit() #1 {
  call void @sampler_register_unit(ptr @__sampler_unit)
  ret void
}

declare void @sampler_unregister_unit(ptr)

; Function Attrs: nounwind
define internal void @__sampler_unregister_unit() #1 {
  call void @sampler_unregister_unit(ptr @__sampler_unit)
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @__sampler.site.entry(...) #2

; Function Attrs: nounwind
define internal void @__sampler_register_unit.7() #1 {
  call void @sampler_register_unit(ptr @__sampler_unit.6)
  ret void
}

; Function Attrs: nounwind
define internal void @__sampler_unregister_unit.8() #1 {
  call void @sampler_unregister_unit(ptr @__sampler_unit.6)
  ret void
}

attributes #0 = { nounwind uwtable }
attributes #1 = { nounwind }
attributes #2 = { nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}
!sampler.lowering = !{!4}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "entry.c", directory: "/tmp")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{!"countdown", !"region", !"timestamps", !"none", !"vectorize-loops", !"off", !"interleave-loops", !"off"}
!5 = distinct !DISubprogram(name: "twice", scope: !1, file: !1, line: 1, type: !6, scopeLine: 1, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{}
!8 = !DILocation(line: 1, scope: !5)
!9 = !DILocation(line: 1, column: 31, scope: !5)
!10 = !DILocation(line: 1, column: 29, scope: !5)
!11 = !DILocation(line: 1, column: 20, scope: !5)
