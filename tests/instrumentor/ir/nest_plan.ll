; A nest's copy for plans: a loop around a loop (as gzip's longest_match) gets, beside its copy of immediates, a
; copy that subtracts the plan's weights, loaded where subtracted, and runs an iteration at a time. The nest's
; guard keeps its one shifted comparison; its failure (a plan, or a sample in reach) goes on to the copy's guard:
; the countdown above W, an entry of the thresholds bounding one iteration's weight (2^62, never passed, without a
; plan). On the copy's back edge the countdown left is compared with W again; below it, the countdown goes back
; to the thread's variable and the checked nest runs from its header. docs/decisions.md, "A nest's copy for
; plans".
;
;   int longest(const unsigned char* w, int start, int chain) {
;     int best = 0, cur = start;
;     do {
;       int len = 0;
;       do {
;         if (w[cur + len] != w[start + len]) break;
;       } while (++len < 64);
;       if (len > best) best = len;
;       cur = (cur * 7 + 3) & 255;
;     } while (--chain != 0);
;     return best;
;   }
;
; (make_input.sh SAMPLER_CC nest_plan.c -O2 -fsampler-schemes=branches)
;
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s --check-prefix=THRESHOLDS
;
; CHECK-LABEL: define private i32 @longest.sampled(
; CHECK:       sampler.loop_guard:
; CHECK:         %sampler.loop_scaled = lshr i64 %sampler.countdown, {{%.*}}
; CHECK-NEXT:    %sampler.loop_fast = icmp sgt i64 %sampler.loop_scaled, %sampler.loop_sites
; CHECK-NEXT:    br i1 %sampler.loop_fast, label %[[UNCHECKED:[0-9]+]], label %sampler.nest_plan_guard
; CHECK:       sampler.nest_plan_guard:
; CHECK-NEXT:    [[W:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 1), align 8
; CHECK-NEXT:    %sampler.nest_planned = icmp ugt i64 %sampler.countdown, [[W]]
; CHECK-NEXT:    br i1 %sampler.nest_planned, label %[[PLANNED:[0-9]+]], label %[[CHECKED:[0-9]+]]
; CHECK:       sampler.nest_leave:
; CHECK-NEXT:    [[TLS:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @sampler_countdown)
; CHECK-NEXT:    [[LEFT:%.*]] = load i64, ptr %sampler.loop_countdown, align 8
; CHECK-NEXT:    store i64 [[LEFT]], ptr [[TLS]], align 8
; CHECK-NEXT:    br label %[[CHECKED]]
;
; The checked nest: its regions' checks.
; CHECK:       {{^}}[[CHECKED]]:
; CHECK:       sampler.region:
;
; The copy of immediates, for the uniform build with no sample in reach.
; CHECK:       {{^}}[[UNCHECKED]]:
; CHECK-NOT:     sampler_take
; CHECK:         sub i64 {{%.*}}, 2
;
; Before each next iteration of the copy for plans: the countdown left above W.
; CHECK:       sampler.nest_iteration:
; CHECK-NEXT:    [[AGAIN:%.*]] = load i64, ptr %sampler.loop_countdown, align 8
; CHECK-NEXT:    %sampler.nest_planned{{[0-9]+}} = icmp ugt i64 [[AGAIN]], [[W]]
; CHECK-NEXT:    br i1 %sampler.nest_planned{{[0-9]+}}, label %[[PLANNED]], label %sampler.nest_leave
;
; The copy for plans: no check; its blocks subtract entries of the thresholds, loaded there, per path as a
; region's clone does: the inner loop's header subtracts its site's weight (entry 3) from the countdown where
; the stretch began, the block after it both sites' (entry 4) from the same.
; CHECK:       {{^}}[[PLANNED]]:
; CHECK-NOT:     sampler_take
; CHECK:         [[START:%.*]] = load i64, ptr %sampler.loop_countdown, align 8
; CHECK:         [[ONE:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 3), align 8
; CHECK-NEXT:    [[AFTER:%.*]] = sub i64 [[START]], [[ONE]]
; CHECK-NEXT:    store i64 [[AFTER]], ptr %sampler.loop_countdown, align 8
; CHECK-NOT:     sampler_take
; CHECK:         [[BOTH:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 4), align 8
; CHECK-NEXT:    [[AFTER2:%.*]] = sub i64 [[START]], [[BOTH]]
; CHECK-NEXT:    store i64 [[AFTER2]], ptr %sampler.loop_countdown, align 8
; CHECK-NOT:     sampler_take
; CHECK:         br i1 {{%.*}}, label %sampler.nest_iteration, label %sampler.loop_leave
;
; The thresholds: the dispatch's entry (0) names the function's sites 0 to 3 (a run of 4; 2^61 without a plan);
; W's entry (1) bounds the inner loop's two sites 64 times each (its constant maximum of 63 trips, plus one: the
; words 0, 64 and 1, 64) and the outer loop's two once (2, a run of 2), 2^62 without a plan; the planned copy's
; entries 3 and 4 are exactly site 0 and sites 0 and 1 (1 and 2 without a plan).
; THRESHOLDS: @__sampler_threshold_bounds = private constant [{{[0-9]+}} x i32] [i32 1, i32 -3, i32 -1, i32 0, i32 -2147483644, i32 3, i32 1, i32 0, i32 0, i32 64, i32 1, i32 64, i32 2, i32 -2147483646, i32 0, i32 0, i32 -2147483648, i32 1, i32 1, i32 0, i32 0, i32 -2147483647, i32 1, i32 1, i32 0, i32 0, i32 -2147483646,
; THRESHOLDS: @__sampler_thresholds = internal global [{{[0-9]+}} x i64] [i64 2305843009213693952, i64 4611686018427387904, i64 0, i64 1, i64 2,

; ModuleID = 'nest_plan.c'
source_filename = "nest_plan.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"


@__sampler_values_branches = internal global [8 x i64] zeroinitializer
@__sampler_scheme_name = private unnamed_addr constant [9 x i8] c"branches\00"
@__sampler_schemes = internal global [1 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 4, i32 2, i32 0, i32 0, ptr @__sampler_values_branches, ptr null, ptr null, ptr null }]
@__sampler_signature = private constant [33 x i8] c"a0fcec0fdee92ff0e696c221cef09d46\00"
@__sampler_weights = internal global [4 x i64] [i64 1, i64 1, i64 1, i64 1]
@__sampler_unit = internal global { i32, i32, ptr, ptr, ptr, i64, ptr, ptr, i32, i32, ptr, i32, i32 } { i32 5, i32 1, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0, ptr @__sampler_weights, ptr null, i32 4, i32 0, ptr null, i32 0, i32 0 }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit, ptr null }]

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable
define dso_local i32 @longest(ptr nocapture noundef readonly %0, i32 noundef %1, i32 noundef %2) local_unnamed_addr #0 !dbg !10 {
  %4 = sext i32 %1 to i64, !dbg !13
  %5 = getelementptr i8, ptr %0, i64 %4
  br label %6, !dbg !13

6:                                                ; preds = %25, %3
  %7 = phi i32 [ %2, %3 ], [ %32, %25 ]
  %8 = phi i32 [ 0, %3 ], [ %28, %25 ], !dbg !14
  %9 = phi i32 [ %1, %3 ], [ %31, %25 ], !dbg !14
  %10 = sext i32 %9 to i64, !dbg !15
  %11 = getelementptr i8, ptr %0, i64 %10, !dbg !15
  br label %12, !dbg !15

12:                                               ; preds = %19, %6
  %13 = phi i64 [ %20, %19 ], [ 0, %6 ], !dbg !14
  %14 = getelementptr i8, ptr %11, i64 %13, !dbg !16
  %15 = load i8, ptr %14, align 1, !dbg !16, !tbaa !17
  %16 = getelementptr i8, ptr %5, i64 %13, !dbg !20
  %17 = load i8, ptr %16, align 1, !dbg !20, !tbaa !17
  %18 = icmp ne i8 %15, %17, !dbg !21
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %18, i32 0), !dbg !16
  br i1 %18, label %23, label %19, !dbg !16

19:                                               ; preds = %12
  %20 = add nuw nsw i64 %13, 1, !dbg !22
  %21 = icmp ult i64 %13, 63, !dbg !23
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %21, i32 1), !dbg !22
  %22 = icmp eq i64 %20, 64, !dbg !23
  br i1 %22, label %25, label %12, !dbg !24, !llvm.loop !25

23:                                               ; preds = %12
  %24 = trunc nuw nsw i64 %13 to i32
  br label %25, !dbg !28

25:                                               ; preds = %19, %23
  %26 = phi i32 [ %24, %23 ], [ 64, %19 ], !dbg !14
  %27 = icmp ugt i32 %26, %8, !dbg !28
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %27, i32 2), !dbg !29
  %28 = tail call i32 @llvm.smax.i32(i32 %26, i32 %8), !dbg !29
  %29 = mul nsw i32 %9, 7, !dbg !30
  %30 = add nsw i32 %29, 3, !dbg !31
  %31 = and i32 %30, 255, !dbg !32
  %32 = add nsw i32 %7, -1, !dbg !33
  %33 = icmp ne i32 %32, 0, !dbg !34
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %33, i32 3), !dbg !33
  br i1 %33, label %6, label %34, !dbg !35, !llvm.loop !36

34:                                               ; preds = %25
  ret i32 %28, !dbg !38
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

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i32 @llvm.smax.i32(i32, i32) #3

attributes #0 = { nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nounwind }
attributes #2 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }
attributes #3 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3, !4, !5, !6, !7}
!llvm.ident = !{!8}
!sampler.lowering = !{!9}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "Debian clang version 19.1.7 (3~deb12u1)", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "nest_plan.c", directory: "/tmp/nestplan-t", checksumkind: CSK_MD5, checksum: "4e52e8814dcf24c087637f950fe691f8")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 8, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 2}
!8 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!9 = !{!"countdown", !"region", !"timestamps", !"none", !"vectorize-loops", !"on", !"interleave-loops", !"on"}
!10 = distinct !DISubprogram(name: "longest", scope: !1, file: !1, line: 1, type: !11, scopeLine: 1, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!11 = !DISubroutineType(types: !12)
!12 = !{}
!13 = !DILocation(line: 3, column: 3, scope: !10)
!14 = !DILocation(line: 0, scope: !10)
!15 = !DILocation(line: 5, column: 5, scope: !10)
!16 = !DILocation(line: 6, column: 11, scope: !10)
!17 = !{!18, !18, i64 0}
!18 = !{!"omnipotent char", !19, i64 0}
!19 = !{!"Simple C/C++ TBAA"}
!20 = !DILocation(line: 6, column: 27, scope: !10)
!21 = !DILocation(line: 6, column: 24, scope: !10)
!22 = !DILocation(line: 7, column: 14, scope: !10)
!23 = !DILocation(line: 7, column: 20, scope: !10)
!24 = !DILocation(line: 7, column: 5, scope: !10)
!25 = distinct !{!25, !15, !26, !27}
!26 = !DILocation(line: 7, column: 24, scope: !10)
!27 = !{!"llvm.loop.mustprogress"}
!28 = !DILocation(line: 8, column: 13, scope: !10)
!29 = !DILocation(line: 8, column: 9, scope: !10)
!30 = !DILocation(line: 9, column: 16, scope: !10)
!31 = !DILocation(line: 9, column: 20, scope: !10)
!32 = !DILocation(line: 9, column: 25, scope: !10)
!33 = !DILocation(line: 10, column: 12, scope: !10)
!34 = !DILocation(line: 10, column: 20, scope: !10)
!35 = !DILocation(line: 10, column: 3, scope: !10)
!36 = distinct !{!36, !13, !37, !27}
!37 = !DILocation(line: 10, column: 24, scope: !10)
!38 = !DILocation(line: 11, column: 3, scope: !10)
