; A plan's functions without samples (docs/decisions.md, "A plan's functions without samples run their twins"):
; each dispatch compares the countdown with an entry of the unit's thresholds, 2^61 without a plan, which the
; runtime lowers to INT64_MIN under a plan that turns the function off; the entry's bound names the function's
; sites and the dispatches of the functions its twin calls directly, so that outer() is off only with leaf().
;
;   __attribute__((noinline)) int leaf(const int* a, int n) {
;     int s = 0;
;     for (int i = 0; i < n; i++)
;       if (a[i] > 0) s += a[i];
;     return s;
;   }
;
;   int outer(const int* a, int n) {
;     int s = 0;
;     for (int i = 0; i < n; i += 4) s += leaf(a + i, 4);
;     return s;
;   }
;
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s
; RUN: %opt -load-pass-plugin=%passes -passes=sampler-lower -S %s | %FileCheck %s --check-prefix=CLEAN
;
; The dispatches' entries first, 0 leaf()'s and 1 outer()'s, both of multiplier 2^64 - 3 (the words -3, -1):
; leaf()'s names its sites 0 and 1 (0 twice, 1 a run of one); outer()'s its site 2 (twice) and, as a pair (0, 0),
; leaf()'s entry: its twin calls leaf()'s twin. leaf()'s counted copy's B (the last entry, multiplier 2^64 - 2)
; names leaf()'s dispatch the same way, so that an off leaf() goes to its twin rather than its code with sites.
; Without a plan each dispatch's entry is 2^61, the constant it replaces.
; CHECK:       @__sampler_threshold_bounds = private constant [42 x i32] [i32 2, i32 -3, i32 -1, i32 0, i32 2, i32 1, i32 -2147483647, i32 2, i32 -3, i32 -1, i32 2, i32 2, i32 0, i32 0,
; CHECK-SAME:  i32 1, i32 -2, i32 -1, i32 0, i32 0]
; CHECK:       @__sampler_thresholds = internal global [8 x i64] [i64 2305843009213693952, i64 2305843009213693952,
;
; leaf()'s dispatch: B first (its counted copy, counted.ll), then its own entry where the constant 2^61 was.
; CHECK-LABEL: define dso_local i32 @leaf(
; CHECK:       sampler.above:
; CHECK-NEXT:    [[LEAF_OFF:%.*]] = load i64, ptr @__sampler_thresholds, align 8
; CHECK-NEXT:    %sampler.off = icmp sge i64 {{%.*}}, [[LEAF_OFF]]
; CHECK-NEXT:    br i1 %sampler.off, label %sampler.unsampled, label %sampler.counted
;
; outer()'s: one load of its entry, one comparison.
; CHECK-LABEL: define dso_local i32 @outer(
; CHECK-NEXT:  sampler.dispatch:
; CHECK-NEXT:    [[TLS:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @sampler_countdown)
; CHECK-NEXT:    [[COUNT:%.*]] = load i64, ptr [[TLS]], align 8
; CHECK-NEXT:    [[OUTER_OFF:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 1), align 8
; CHECK-NEXT:    %sampler.off = icmp sge i64 [[COUNT]], [[OUTER_OFF]]
; CHECK-NEXT:    br i1 %sampler.off, label %sampler.unsampled, label %sampler.sampled
;
; outer()'s twin calls leaf()'s twin, which its entry's pair (0, 0) says.
; CHECK-LABEL: define private i32 @outer.unsampled(
; CHECK:         call i32 @leaf.unsampled(
;
; After the clean-up the dispatch is still the countdown's load, the entry's and a comparison: what the code
; generator makes a load and a comparison with memory, no 64-bit immediate (docs/performance.md).
; CLEAN-LABEL: define dso_local i32 @outer(
; CLEAN-NEXT:  sampler.dispatch:
; CLEAN-NEXT:    [[TLS:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @sampler_countdown)
; CLEAN-NEXT:    [[COUNT:%.*]] = load i64, ptr [[TLS]], align 8
; CLEAN-NEXT:    [[OUTER_OFF:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 1), align 8
; CLEAN-NEXT:    %sampler.off = icmp sge i64 [[COUNT]], [[OUTER_OFF]]
;
; The input: make_input.sh (beside this file) over the source above as dispatch_plan.c, with -O2
; -fsampler-schemes=branches.

; ModuleID = 'dispatch_plan.c'
source_filename = "dispatch_plan.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"


@__sampler_values_branches = internal global [6 x i64] zeroinitializer
@__sampler_scheme_name = private unnamed_addr constant [9 x i8] c"branches\00"
@__sampler_schemes = internal global [1 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 3, i32 2, i32 0, i32 0, ptr @__sampler_values_branches, ptr null, ptr null, ptr null }]
@__sampler_signature = private constant [33 x i8] c"067613eefaef35285a1dbad4e48bba8b\00"
@__sampler_weights = internal global [3 x i64] [i64 1, i64 1, i64 1]
@__sampler_unit = internal global { i32, i32, ptr, ptr, ptr, i64, ptr, ptr, i32, i32, ptr, i32, i32 } { i32 6, i32 1, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0, ptr @__sampler_weights, ptr null, i32 3, i32 0, ptr null, i32 0, i32 0 }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit, ptr null }]

; Function Attrs: nofree noinline norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable
define dso_local i32 @leaf(ptr nocapture noundef readonly %0, i32 noundef %1) local_unnamed_addr #0 !dbg !10 {
  %3 = icmp sgt i32 %1, 0, !dbg !13
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %3, i32 0), !dbg !14
  br i1 %3, label %4, label %7, !dbg !15

4:                                                ; preds = %2
  %5 = zext nneg i32 %1 to i64, !dbg !15
  %6 = zext nneg i32 %1 to i64, !dbg !13
  br label %9, !dbg !15

7:                                                ; preds = %9, %2
  %8 = phi i32 [ 0, %2 ], [ %16, %9 ], !dbg !16
  ret i32 %8, !dbg !17

9:                                                ; preds = %4, %9
  %10 = phi i64 [ 0, %4 ], [ %17, %9 ]
  %11 = phi i32 [ 0, %4 ], [ %16, %9 ]
  %12 = getelementptr inbounds i32, ptr %0, i64 %10, !dbg !18
  %13 = load i32, ptr %12, align 4, !dbg !18, !tbaa !19
  %14 = icmp sgt i32 %13, 0, !dbg !23
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %14, i32 1), !dbg !18
  %15 = tail call i32 @llvm.smax.i32(i32 %13, i32 0), !dbg !18
  %16 = add nuw nsw i32 %15, %11, !dbg !18
  %17 = add nuw nsw i64 %10, 1, !dbg !24
  %18 = icmp ult i64 %17, %5, !dbg !13
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %18, i32 0), !dbg !14
  %19 = icmp eq i64 %17, %6, !dbg !13
  br i1 %19, label %7, label %9, !dbg !15, !llvm.loop !25
}

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable
define dso_local i32 @outer(ptr nocapture noundef readonly %0, i32 noundef %1) local_unnamed_addr #1 !dbg !28 {
  %3 = icmp sgt i32 %1, 0, !dbg !29
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %3, i32 2), !dbg !30
  br i1 %3, label %6, label %4, !dbg !31

4:                                                ; preds = %6, %2
  %5 = phi i32 [ 0, %2 ], [ %11, %6 ], !dbg !32
  ret i32 %5, !dbg !33

6:                                                ; preds = %2, %6
  %7 = phi i64 [ %12, %6 ], [ 0, %2 ]
  %8 = phi i32 [ %11, %6 ], [ 0, %2 ]
  %9 = getelementptr inbounds i32, ptr %0, i64 %7, !dbg !34
  %10 = tail call i32 @leaf(ptr noundef %9, i32 noundef 4), !dbg !35
  %11 = add nsw i32 %10, %8, !dbg !36
  %12 = add nuw nsw i64 %7, 4, !dbg !37
  %13 = trunc nuw i64 %12 to i32, !dbg !29
  %14 = icmp slt i32 %13, %1, !dbg !29
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %14, i32 2), !dbg !30
  br i1 %14, label %6, label %4, !dbg !31, !llvm.loop !38
}

declare void @sampler_register_unit(ptr) local_unnamed_addr

; Function Attrs: nounwind
define internal void @__sampler_register_unit() #2 {
  tail call void @sampler_register_unit(ptr nonnull @__sampler_unit) #2
  ret void
}

declare void @sampler_unregister_unit(ptr) local_unnamed_addr

; Function Attrs: nounwind
define internal void @__sampler_unregister_unit() #2 {
  tail call void @sampler_unregister_unit(ptr nonnull @__sampler_unit) #2
  ret void
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @__sampler.site.branch(...) local_unnamed_addr #3

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i32 @llvm.smax.i32(i32, i32) #4

attributes #0 = { nofree noinline norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #2 = { nounwind }
attributes #3 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }
attributes #4 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3, !4, !5, !6, !7}
!llvm.ident = !{!8}
!sampler.lowering = !{!9}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "Debian clang version 19.1.7 (3~deb12u1)", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "dispatch_plan.c", directory: "/tmp/planoff", checksumkind: CSK_MD5, checksum: "88c8a360ccabb3b2660b3fb49e7d93fc")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 8, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 2}
!8 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!9 = !{!"countdown", !"region", !"timestamps", !"none", !"vectorize-loops", !"on", !"interleave-loops", !"on"}
!10 = distinct !DISubprogram(name: "leaf", scope: !1, file: !1, line: 1, type: !11, scopeLine: 1, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!11 = !DISubroutineType(types: !12)
!12 = !{}
!13 = !DILocation(line: 3, column: 21, scope: !10)
!14 = !DILocation(line: 3, column: 19, scope: !10)
!15 = !DILocation(line: 3, column: 3, scope: !10)
!16 = !DILocation(line: 0, scope: !10)
!17 = !DILocation(line: 5, column: 3, scope: !10)
!18 = !DILocation(line: 4, column: 9, scope: !10)
!19 = !{!20, !20, i64 0}
!20 = !{!"int", !21, i64 0}
!21 = !{!"omnipotent char", !22, i64 0}
!22 = !{!"Simple C/C++ TBAA"}
!23 = !DILocation(line: 4, column: 14, scope: !10)
!24 = !DILocation(line: 3, column: 27, scope: !10)
!25 = distinct !{!25, !15, !26, !27}
!26 = !DILocation(line: 4, column: 27, scope: !10)
!27 = !{!"llvm.loop.mustprogress"}
!28 = distinct !DISubprogram(name: "outer", scope: !1, file: !1, line: 8, type: !11, scopeLine: 8, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!29 = !DILocation(line: 10, column: 21, scope: !28)
!30 = !DILocation(line: 10, column: 19, scope: !28)
!31 = !DILocation(line: 10, column: 3, scope: !28)
!32 = !DILocation(line: 0, scope: !28)
!33 = !DILocation(line: 11, column: 3, scope: !28)
!34 = !DILocation(line: 10, column: 46, scope: !28)
!35 = !DILocation(line: 10, column: 39, scope: !28)
!36 = !DILocation(line: 10, column: 36, scope: !28)
!37 = !DILocation(line: 10, column: 28, scope: !28)
!38 = distinct !{!38, !31, !39, !27}
!39 = !DILocation(line: 10, column: 52, scope: !28)
