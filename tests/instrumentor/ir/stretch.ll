; Stretches on a region's fast side, in a unit with weights: the region's clone has two blocks with a site each,
; the second entered only from the first. The first subtracts its own site's entry of the thresholds from the
; countdown where the clone begins; the second does not subtract again from what the first stored, but from the
; same start, the entry of the thresholds that is the whole stretch (both sites): so one subtraction stays live on
; a path, and under a plan the runtime computes that entry from its bound (docs/decisions.md, "Per-site weights").
;
;   int seen, deeper;
;   void note(int a, int b, int c) {
;     if (a > b) {
;       seen = a;
;       if (b > c) deeper = b;
;     }
;   }
;
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s
; RUN: %opt -load-pass-plugin=%passes -passes=sampler-lower -S %s | %FileCheck %s --check-prefix=CLEAN
;
; The thresholds: the region's check (both sites), the first block's stretch (site 0), the second's (sites 0 and
; 1), each bound one run of sites from site 0 with the multiplier 1.
; CHECK:       @__sampler_threshold_bounds = private constant [15 x i32] [i32 1, i32 1, i32 0, i32 0, i32 -2147483646, i32 1, i32 1, i32 0, i32 0, i32 -2147483647, i32 1, i32 1, i32 0, i32 0, i32 -2147483646]
; CHECK:       @__sampler_thresholds = internal global [3 x i64] [i64 2, i64 1, i64 2]
;
; CHECK-LABEL: define dso_local void @note(
; CHECK:       sampler.region.fast:
; CHECK-NEXT:    [[START:%.*]] = load i64, ptr %sampler.local_countdown
; CHECK-NOT:     load i64, ptr %sampler.local_countdown
; CHECK:         [[FIRST:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 1)
; CHECK-NEXT:    [[LEFT1:%.*]] = sub i64 [[START]], [[FIRST]]
; CHECK-NEXT:    store i64 [[LEFT1]], ptr %sampler.local_countdown
; CHECK-NEXT:    br i1 {{%.*}}, label %[[SECOND:.*]], label %[[OUT:[0-9]+]]
; CHECK:       [[SECOND]]:
; CHECK-NOT:     load i64, ptr %sampler.local_countdown
; CHECK:         [[WHOLE:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 2)
; CHECK-NEXT:    [[LEFT2:%.*]] = sub i64 [[START]], [[WHOLE]]
; CHECK-NEXT:    store i64 [[LEFT2]], ptr %sampler.local_countdown
; CHECK:       [[OUT]]:
; CHECK-NEXT:    call ptr @llvm.threadlocal.address.p0(ptr @sampler_countdown)
;
; After the clean-up, the countdown loaded at the function's entry minus the entry of the path taken, once.
; CLEAN-LABEL: define dso_local void @note(
; CLEAN:         [[COUNT:%.*]] = load i64, ptr {{%.*}}
; CLEAN:       sampler.region.fast:
; CLEAN:         [[FIRST:%.*]] = load i64, ptr getelementptr inbounds (i8, ptr @__sampler_thresholds, i64 8)
; CLEAN-NOT:     sub i64
; CLEAN:         [[WHOLE:%.*]] = load i64, ptr getelementptr inbounds (i8, ptr @__sampler_thresholds, i64 16)
; CLEAN-NOT:     sub i64
; CLEAN:         [[ENTRY:%.*]] = phi i64 [ [[WHOLE]], {{%.*}} ], [ [[WHOLE]], {{%.*}} ], [ [[FIRST]], %sampler.region.fast ]
; CLEAN-NEXT:    sub i64 [[COUNT]], [[ENTRY]]
; CLEAN-NOT:     sub i64
; CLEAN:       }
;
; The input: make_input.sh (beside this file) over the source above as stretch.c, with -O2 -fsampler-schemes=branches.

; ModuleID = 'stretch.c'
source_filename = "stretch.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"


@seen = dso_local local_unnamed_addr global i32 0, align 4
@deeper = dso_local local_unnamed_addr global i32 0, align 4
@__sampler_values_branches = internal global [4 x i64] zeroinitializer
@__sampler_scheme_name = private unnamed_addr constant [9 x i8] c"branches\00"
@__sampler_schemes = internal global [1 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 2, i32 2, i32 0, i32 0, ptr @__sampler_values_branches, ptr null, ptr null, ptr null }]
@__sampler_signature = private constant [33 x i8] c"f4ffe26e93dba3e663a62dc1b0d7efa3\00"
@__sampler_weights = internal global [2 x i64] [i64 1, i64 1]
@__sampler_unit = internal global { i32, i32, ptr, ptr, ptr, i64, ptr, ptr, i32, i32, ptr, i32, i32 } { i32 4, i32 1, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0, ptr @__sampler_weights, ptr null, i32 2, i32 0, ptr null, i32 0, i32 0 }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit, ptr null }]

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(write, argmem: none, inaccessiblemem: readwrite) uwtable
define dso_local void @note(i32 noundef %0, i32 noundef %1, i32 noundef %2) local_unnamed_addr #0 !dbg !10 {
  %4 = icmp sgt i32 %0, %1, !dbg !13
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %4, i32 0), !dbg !14
  br i1 %4, label %5, label %8, !dbg !14

5:                                                ; preds = %3
  store i32 %0, ptr @seen, align 4, !dbg !15, !tbaa !16
  %6 = icmp sgt i32 %1, %2, !dbg !20
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %6, i32 1), !dbg !21
  br i1 %6, label %7, label %8, !dbg !21

7:                                                ; preds = %5
  store i32 %1, ptr @deeper, align 4, !dbg !22, !tbaa !16
  br label %8, !dbg !23

8:                                                ; preds = %5, %7, %3
  ret void, !dbg !24
}

declare void @sampler_register_unit(ptr) local_unnamed_addr

; Function Attrs: nounwind
define internal void @__sampler_register_unit() #1 {
  tail call void @sampler_register_unit(ptr nonnull @__sampler_unit) #1
  ret void
}

declare void @sampler_unregister_unit(ptr) local_unnamed_addr

; Function Attrs: nounwind
define internal void @__sampler_unregister_unit() #1 {
  tail call void @sampler_unregister_unit(ptr nonnull @__sampler_unit) #1
  ret void
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @__sampler.site.branch(...) local_unnamed_addr #2

attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(write, argmem: none, inaccessiblemem: readwrite) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nounwind }
attributes #2 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3, !4, !5, !6, !7}
!llvm.ident = !{!8}
!sampler.lowering = !{!9}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "Debian clang version 19.1.7 (3~deb12u1)", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "stretch.c", directory: "/tmp/irin", checksumkind: CSK_MD5, checksum: "dcb79dcb75b15c53e3b7519ad9c6e7c4")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 8, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 2}
!8 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!9 = !{!"countdown", !"region", !"timestamps", !"none", !"vectorize-loops", !"on", !"interleave-loops", !"on"}
!10 = distinct !DISubprogram(name: "note", scope: !1, file: !1, line: 3, type: !11, scopeLine: 3, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!11 = !DISubroutineType(types: !12)
!12 = !{}
!13 = !DILocation(line: 4, column: 9, scope: !10)
!14 = !DILocation(line: 4, column: 7, scope: !10)
!15 = !DILocation(line: 5, column: 10, scope: !10)
!16 = !{!17, !17, i64 0}
!17 = !{!"int", !18, i64 0}
!18 = !{!"omnipotent char", !19, i64 0}
!19 = !{!"Simple C/C++ TBAA"}
!20 = !DILocation(line: 6, column: 11, scope: !10)
!21 = !DILocation(line: 6, column: 9, scope: !10)
!22 = !DILocation(line: 6, column: 23, scope: !10)
!23 = !DILocation(line: 6, column: 16, scope: !10)
!24 = !DILocation(line: 8, column: 1, scope: !10)
