; sampler-collect under opt: without the AST action (whose sites come through process state), it finds what the
; IR alone shows, function entries. It numbers the site, emits the unit (site text, counters, scheme table,
; constructor), leaves a site marker, and writes the lowering's settings; sampler-lower then lowers the marker
; and removes the settings.
;
;   int twice(int x) { return 2 * x; }
;
; RUN: %opt -load-pass-plugin=%passes -passes=sampler-collect -S %s | %FileCheck %s
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-collect,sampler-lower<O0>' -S %s \
; RUN:   | %FileCheck %s --check-prefix=LOWERED
;
; The site text: file, line, function, node.
; CHECK:       module asm "\09.ascii \22<sites unit=\\\22[[SIGNATURE:[0-9a-f]{32}]]\\\22 scheme=\\\22function-entries\\\22>\\n\22"
; CHECK-NEXT:  module asm "\09.ascii \22entry.c\\t1\\ttwice\\t0\\n\22"
; CHECK-NEXT:  module asm "\09.ascii \22</sites>\\n\22"
; CHECK:       @__sampler_values_function-entries = internal global [1 x i64] zeroinitializer
; CHECK:       @__sampler_schemes = internal global [1 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 1, i32 1, i32 0, i32 0, ptr @__sampler_values_function-entries, ptr null, ptr null, ptr null }]
; CHECK:       @__sampler_signature = private constant [33 x i8] c"[[SIGNATURE]]\00"
; CHECK:       @__sampler_weights = internal global [1 x i64] [i64 1]
; CHECK:       @__sampler_unit = internal global {{.*}} { i32 6, i32 1, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0, ptr @__sampler_weights, ptr null, i32 1, i32 0, ptr null, i32 0, i32 0 }
; CHECK:       @llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }]
; CHECK-LABEL: define dso_local i32 @twice(
; CHECK-NEXT:    alloca i32
; CHECK-NEXT:    call void (...) @__sampler.site.entry(ptr @__sampler_schemes, i1 false, i32 0)
; CHECK:       !sampler.lowering = !{[[SETTINGS:![0-9]+]]}
; CHECK:       [[SETTINGS]] = !{!"countdown", !"region", !"timestamps", !"none", !"vectorize-loops", !"off", !"interleave-loops", !"off"}
;
; LOWERED-LABEL: define dso_local i32 @twice(
; LOWERED:         %sampler.weight = load i64, ptr @__sampler_weights
; LOWERED:         [[LEFT:%.*]] = sub nsw i64 %sampler.countdown, %sampler.weight
; LOWERED:         %sampler.take = icmp sle i64 [[LEFT]], 0
; LOWERED:         call preserve_mostcc i64 @sampler_take_in_unit(ptr @__sampler_schemes, i64 0, i64 0, i64 0, i64 [[LEFT]])
; LOWERED-NOT:     call void (...) @__sampler.site
; LOWERED-NOT:     !sampler.lowering
;
; The input: clang-19 -gline-tables-only -O2 -Xclang -disable-llvm-passes -S -emit-llvm over the source above as
; entry.c, its TBAA metadata removed.

source_filename = "entry.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

define dso_local i32 @twice(i32 noundef %0) #0 !dbg !9 {
  %2 = alloca i32, align 4
  store i32 %0, ptr %2, align 4
  %3 = load i32, ptr %2, align 4, !dbg !16
  %4 = mul nsw i32 2, %3, !dbg !17
  ret i32 %4, !dbg !18
}

attributes #0 = { nounwind uwtable }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "entry.c", directory: "/tmp")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!9 = distinct !DISubprogram(name: "twice", scope: !1, file: !1, line: 1, type: !10, scopeLine: 1, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!10 = !DISubroutineType(types: !11)
!11 = !{}
!16 = !DILocation(line: 1, column: 31, scope: !9)
!17 = !DILocation(line: 1, column: 29, scope: !9)
!18 = !DILocation(line: 1, column: 20, scope: !9)
