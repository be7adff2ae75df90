; An innermost loop's copy for plans: beside the copy that subtracts immediates (which a plan's shift of 63 keeps
; from running), a unit with weights gets a second copy that subtracts the plan's weights, read before the loop.
; The guard's two comparisons come in turn: the countdown above (B + 1) * w, then shifted above it (the same test
; without a plan); only a plan fails the second, and goes on to the planned copy's guard: the countdown above
; (B + 1) * W without overflow, W an entry of the thresholds bounding an iteration's weight (2^62, never passed,
; without a plan). docs/decisions.md, "A loop's copy for plans".
;
;   long sum_positive(const long* a, long n) {
;     long s = 0;
;     for (long i = 0; i < n; i++)
;       if (a[i] > 0) s += a[i];
;     return s;
;   }
;
; (make_input.sh SAMPLER_CC sum_positive.c -O2 -fsampler-schemes=branches)
;
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s --check-prefix=THRESHOLDS
;
; CHECK-LABEL: define private i64 @sum_positive.sampled(
; CHECK:       sampler.loop_guard:
; CHECK:         %sampler.loop_sites = mul i64 [[TRIPS:%.*]], 2
; CHECK-NEXT:    %sampler.loop_fast = icmp sgt i64 %sampler.countdown, %sampler.loop_sites
; CHECK-NEXT:    [[WITHIN:%.*]] = icmp ult i64 {{%.*}}, 281474976710656
; CHECK-NEXT:    [[ABOVE:%.*]] = and i1 [[WITHIN]], %sampler.loop_fast
; CHECK:         br i1 [[ABOVE]], label %sampler.loop_shifted, label %[[CHECKED:[0-9]+]]
; CHECK:       sampler.loop_shifted:
; CHECK-NEXT:    [[SHIFT:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 2)
; CHECK-NEXT:    %sampler.loop_scaled = lshr i64 %sampler.countdown, [[SHIFT]]
; CHECK-NEXT:    [[SHIFTED:%.*]] = icmp sgt i64 %sampler.loop_scaled, %sampler.loop_sites
; CHECK-NEXT:    br i1 [[SHIFTED]], label %[[UNCHECKED:[0-9]+]], label %sampler.loop_plan_guard
; CHECK:       sampler.loop_plan_guard:
; CHECK-NEXT:    [[W:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 1), align 8
; CHECK-NEXT:    [[ITERATIONS:%.*]] = add i64 {{%.*}}, 1
; CHECK-NEXT:    [[PRODUCT:%.*]] = call { i64, i1 } @llvm.umul.with.overflow.i64(i64 [[ITERATIONS]], i64 [[W]])
; CHECK-NEXT:    [[OVERFLOW:%.*]] = extractvalue { i64, i1 } [[PRODUCT]], 1
; CHECK-NEXT:    [[FITS:%.*]] = xor i1 [[OVERFLOW]], true
; CHECK-NEXT:    [[BOUND:%.*]] = extractvalue { i64, i1 } [[PRODUCT]], 0
; CHECK-NEXT:    %sampler.loop_planned = icmp ugt i64 %sampler.countdown, [[BOUND]]
; CHECK-NEXT:    [[PLANNED:%.*]] = and i1 [[FITS]], %sampler.loop_planned
; CHECK-NEXT:    [[BLOCK_WEIGHT:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 3)
; CHECK:         br i1 [[PLANNED]], label %[[PLANNED_COPY:[0-9]+]], label %[[CHECKED]]
;
; The copy of immediates: one subtraction of 2 an iteration, no check.
; CHECK:       {{^}}[[UNCHECKED]]:
; CHECK-NOT:     sampler_take
; CHECK:         [[LEFT:%.*]] = load i64, ptr %sampler.loop_countdown, align 8
; CHECK-NEXT:    [[NEXT:%.*]] = sub i64 [[LEFT]], 2
; CHECK-NEXT:    store i64 [[NEXT]], ptr %sampler.loop_countdown, align 8
; CHECK-NOT:     sampler_take
; CHECK:         br i1 {{%.*}}, label %sampler.loop_leave, label %[[UNCHECKED]]
;
; The planned copy: the block's entry, loaded in the guard, subtracted an iteration; no check; it leaves through
; a block of its own that puts the countdown back into the thread's variable (as the other copy's).
; CHECK:       {{^}}[[PLANNED_COPY]]:
; CHECK-NOT:     sampler_take
; CHECK:         [[LEFT:%.*]] = load i64, ptr %sampler.loop_countdown, align 8
; CHECK-NEXT:    [[NEXT:%.*]] = sub i64 [[LEFT]], [[BLOCK_WEIGHT]]
; CHECK-NEXT:    store i64 [[NEXT]], ptr %sampler.loop_countdown, align 8
; CHECK-NOT:     sampler_take
; CHECK:         br i1 {{%.*}}, label %sampler.loop_leave{{[0-9]+}}, label %[[PLANNED_COPY]]
;
; The thresholds: the dispatch's entry (0) names the function's sites (2^61 without a plan, multiplier 2^64 - 3);
; W's entry (1) bounds the loop's two sites (0 and 1, a run of 2: the words 1, 1, 0, 0, 2^31 + 2), 2^62 without a
; plan; the shift's (2) is 0 without a plan (n 0, its multiplier's bit 63); the planned copy's block subtracts
; entry 3, exactly its two sites (2 without a plan).
; THRESHOLDS: @__sampler_threshold_bounds = private constant [{{[0-9]+}} x i32] [i32 2, i32 -3, i32 -1, i32 0, i32 2, i32 1, i32 -2147483647, i32 1, i32 1, i32 0, i32 0, i32 -2147483646, i32 0, i32 0, i32 -2147483648, i32 1, i32 1, i32 0, i32 0, i32 -2147483646,
; THRESHOLDS: @__sampler_thresholds = internal global [{{[0-9]+}} x i64] [i64 2305843009213693952, i64 4611686018427387904, i64 0, i64 2,

; ModuleID = 'loop_plan.c'
source_filename = "loop_plan.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"


@__sampler_values_branches = internal global [4 x i64] zeroinitializer
@__sampler_scheme_name = private unnamed_addr constant [9 x i8] c"branches\00"
@__sampler_schemes = internal global [1 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 2, i32 2, i32 0, i32 0, ptr @__sampler_values_branches, ptr null, ptr null, ptr null }]
@__sampler_signature = private constant [33 x i8] c"eda3d9d3cd7c26b4bc7525c20211ca8f\00"
@__sampler_weights = internal global [2 x i64] [i64 1, i64 1]
@__sampler_unit = internal global { i32, i32, ptr, ptr, ptr, i64, ptr, ptr, i32, i32, ptr, i32, i32 } { i32 5, i32 1, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0, ptr @__sampler_weights, ptr null, i32 2, i32 0, ptr null, i32 0, i32 0 }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit, ptr null }]

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable
define dso_local i64 @sum_positive(ptr nocapture noundef readonly %0, i64 noundef %1) local_unnamed_addr #0 !dbg !10 {
  %3 = icmp sgt i64 %1, 0, !dbg !13
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %3, i32 0), !dbg !14
  br i1 %3, label %6, label %4, !dbg !15

4:                                                ; preds = %6, %2
  %5 = phi i64 [ 0, %2 ], [ %13, %6 ], !dbg !16
  ret i64 %5, !dbg !17

6:                                                ; preds = %2, %6
  %7 = phi i64 [ %14, %6 ], [ 0, %2 ]
  %8 = phi i64 [ %13, %6 ], [ 0, %2 ]
  %9 = getelementptr inbounds i64, ptr %0, i64 %7, !dbg !18
  %10 = load i64, ptr %9, align 8, !dbg !18, !tbaa !19
  %11 = icmp sgt i64 %10, 0, !dbg !23
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %11, i32 1), !dbg !18
  %12 = tail call i64 @llvm.smax.i64(i64 %10, i64 0), !dbg !18
  %13 = add nuw nsw i64 %12, %8, !dbg !18
  %14 = add nuw nsw i64 %7, 1, !dbg !24
  %15 = icmp slt i64 %14, %1, !dbg !13
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %15, i32 0), !dbg !14
  %16 = icmp eq i64 %14, %1, !dbg !13
  br i1 %16, label %4, label %6, !dbg !15, !llvm.loop !25
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
declare i64 @llvm.smax.i64(i64, i64) #3

attributes #0 = { nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nounwind }
attributes #2 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }
attributes #3 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3, !4, !5, !6, !7}
!llvm.ident = !{!8}
!sampler.lowering = !{!9}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "Debian clang version 19.1.7 (3~deb12u1)", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "loop_plan.c", directory: "/tmp/plan-loops", checksumkind: CSK_MD5, checksum: "fce114512accb190bae551e6965b938f")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 8, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 2}
!8 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!9 = !{!"countdown", !"region", !"timestamps", !"none", !"vectorize-loops", !"on", !"interleave-loops", !"on"}
!10 = distinct !DISubprogram(name: "sum_positive", scope: !1, file: !1, line: 1, type: !11, scopeLine: 1, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!11 = !DISubroutineType(types: !12)
!12 = !{}
!13 = !DILocation(line: 3, column: 22, scope: !10)
!14 = !DILocation(line: 3, column: 20, scope: !10)
!15 = !DILocation(line: 3, column: 3, scope: !10)
!16 = !DILocation(line: 0, scope: !10)
!17 = !DILocation(line: 5, column: 3, scope: !10)
!18 = !DILocation(line: 4, column: 9, scope: !10)
!19 = !{!20, !20, i64 0}
!20 = !{!"long", !21, i64 0}
!21 = !{!"omnipotent char", !22, i64 0}
!22 = !{!"Simple C/C++ TBAA"}
!23 = !DILocation(line: 4, column: 14, scope: !10)
!24 = !DILocation(line: 3, column: 28, scope: !10)
!25 = distinct !{!25, !15, !26, !27}
!26 = !DILocation(line: 4, column: 27, scope: !10)
!27 = !{!"llvm.loop.mustprogress"}
