; A leaf function's counted copy: a function with loops that calls nothing gets f.counted, its code without checks
; whose countdown drops by the sites each block passes and goes back to the thread's variable at each return; the
; dispatch runs it when the countdown is above B, the most sites one call can pass (docs/decisions.md, "Fast
; sides: a leaf function's counted copy").
;
;   int first_differs(const unsigned char* a, const unsigned char* b, int n) {
;     for (int i = 0; i < n; i++)
;       if (a[i] != b[i]) return i;
;     return -1;
;   }
;
;   long first_zero(const long* a, long n) {
;     for (long i = 0; i < n; i++)
;       if (a[i] == 0) return i;
;     return -1;
;   }
;
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s
; RUN: %opt -load-pass-plugin=%passes -passes=sampler-lower -S %s | %FileCheck %s --check-prefix=CLEAN
;
; Each function's dispatch compares with an entry of the thresholds, first (2^61 without a plan; under one INT64_MIN
; when the plan turns the function off): its bound, of multiplier 2^64 - 3 (the words -3, -1), lists the function's
; sites (first_differs' 0, twice, and 1; first_zero's 2 and 3) and no callee (docs/decisions.md, "A plan's
; functions without samples run their twins").
; first_differs' loop runs at most 2^31 - 1 times (an int's count): B is the constant (2^31 - 1) * 2 sites an
; iteration + 1 before the loop, an entry of the thresholds after the function's own three, whose bound (the
; multiplier 2^64 - 2: the words -2, -1) makes it 2^61 - 1 under a plan: below sampling off's countdowns, above all
; others, so that the copy (which subtracts immediates) never runs; its pair (0, 0) names first_differs' dispatch,
; whose being off makes B INT64_MIN.
; CHECK:       @__sampler_threshold_bounds = private constant [52 x i32] [i32 2, i32 -3, i32 -1, i32 0, i32 2, i32 1, i32 -2147483647, i32 2, i32 -3, i32 -1, i32 2, i32 2, i32 3, i32 -2147483647, i32 1, i32 1, i32 0, i32 0, i32 -2147483646, i32 1, i32 1, i32 0, i32 1, i32 -2147483647, i32 1, i32 1, i32 0, i32 0, i32 -2147483646, i32 1, i32 -2, i32 -1, i32 0, i32 0,
; CHECK:       @__sampler_thresholds = internal global [10 x i64] [i64 2305843009213693952, i64 2305843009213693952, i64 2, i64 1, i64 2, i64 4294967295,
;
; B is tested first, in the dispatch's entry: a sampled run's countdown is below it and goes to f.sampled after one
; comparison, as before the copy existed; above it, sampling off goes to the twin, the rest to the copy.
; CHECK-LABEL: define dso_local i32 @first_differs(
; CHECK-NEXT:  sampler.dispatch:
; CHECK-NEXT:    [[TLS:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @sampler_countdown)
; CHECK-NEXT:    [[COUNT:%.*]] = load i64, ptr [[TLS]], align 8
; CHECK-NEXT:    [[B:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 5), align 8
; CHECK-NEXT:    %sampler.within = icmp sle i64 [[COUNT]], [[B]]
; CHECK-NEXT:    br i1 %sampler.within, label %sampler.sampled, label %sampler.above
; CHECK:       sampler.unsampled:
; CHECK-NEXT:    musttail call i32 @first_differs.unsampled(
; CHECK:       sampler.above:
; CHECK-NEXT:    [[OFF:%.*]] = load i64, ptr @__sampler_thresholds, align 8
; CHECK-NEXT:    %sampler.off = icmp sge i64 [[COUNT]], [[OFF]]
; CHECK-NEXT:    br i1 %sampler.off, label %sampler.unsampled, label %sampler.counted
; CHECK:       sampler.sampled:
; CHECK-NEXT:    musttail call i32 @first_differs.sampled(
; CHECK:       sampler.counted:
; CHECK-NEXT:    musttail call i32 @first_differs.counted(
;
; first_zero's loop runs up to a long's count: B from the argument, (n - 1 + 1) * 2 + 1, the count below 2^48,
; and the loops' shift (63 under a plan), tested after sampling off's test.
; CHECK-LABEL: define dso_local i64 @first_zero(
; CHECK:         [[OFF:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 1), align 8
; CHECK-NEXT:    %sampler.off = icmp sge i64 {{%.*}}, [[OFF]]
; CHECK-NEXT:    br i1 %sampler.off, label %sampler.unsampled, label %sampler.reach
; CHECK:       sampler.reach:
; CHECK-NEXT:    [[TRIPS:%.*]] = add i64 %1, -1
; CHECK-NEXT:    [[ITERATIONS:%.*]] = add i64 [[TRIPS]], 1
; CHECK-NEXT:    [[INSIDE:%.*]] = mul i64 [[ITERATIONS]], 2
; CHECK-NEXT:    %sampler.call_sites = add i64 1, [[INSIDE]]
; CHECK-NEXT:    [[WITHIN:%.*]] = icmp ult i64 [[TRIPS]], 281474976710656
; CHECK-NEXT:    [[SHIFT:%.*]] = load i64, ptr getelementptr inbounds (i64, ptr @__sampler_thresholds, i64 9)
; CHECK-NEXT:    %sampler.loop_scaled = lshr i64 {{%.*}}, [[SHIFT]]
; CHECK-NEXT:    [[ABOVE:%.*]] = icmp sgt i64 %sampler.loop_scaled, %sampler.call_sites
; CHECK-NEXT:    [[FAST:%.*]] = and i1 [[WITHIN]], [[ABOVE]]
; CHECK-NEXT:    br i1 [[FAST]], label %sampler.counted, label %sampler.sampled
;
; The copy: the thread's countdown into a local at its entry, one subtraction a block with sites, no check, the
; local back into the thread's variable at the return.
; CHECK-LABEL: define private i32 @first_differs.counted(
; CHECK-NEXT:  sampler.counted:
; CHECK-NEXT:    %sampler.call_countdown = alloca i64, align 8
; CHECK-NEXT:    [[TLS:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @sampler_countdown)
; CHECK-NEXT:    [[START:%.*]] = load i64, ptr [[TLS]], align 8
; CHECK-NEXT:    store i64 [[START]], ptr %sampler.call_countdown, align 8
; CHECK-NOT:     sampler_take
; CHECK:         [[LEFT:%.*]] = load i64, ptr %sampler.call_countdown, align 8
; CHECK-NEXT:    [[NEXT:%.*]] = sub i64 [[LEFT]], 1
; CHECK-NEXT:    store i64 [[NEXT]], ptr %sampler.call_countdown, align 8
; CHECK-NOT:     sampler_take
; CHECK:         [[OUT:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @sampler_countdown)
; CHECK-NEXT:    [[END:%.*]] = load i64, ptr %sampler.call_countdown, align 8
; CHECK-NEXT:    store i64 [[END]], ptr [[OUT]], align 8
; CHECK-NEXT:    ret i32
; CHECK-NEXT:  }
; CHECK-LABEL: define private i64 @first_zero.counted(
;
; After the clean-up the countdown is a register, and the loop has none: its two sites an iteration are counted by
; its induction variable where it leaves (twice the iterations before the last, and the last's one site before its
; exit in the loop, or its two at the latch: lower_counted.cpp, subtract_by_iterations()), and the return stores
; what is left.
; CLEAN-LABEL: define private i32 @first_differs.counted(
; CLEAN-NOT:     alloca
; CLEAN:         [[START:%.*]] = load i64, ptr [[TLS:%.*]], align 8
; CLEAN-NOT:     %sampler.call_countdown
; CLEAN:       sampler.counted_leave:
; CLEAN-NEXT:    [[TWICE:%.*]] = shl nuw i64 [[ITERATIONS:%.*]], 1
; CLEAN-NEXT:    [[MINUS:%.*]] = xor i64 [[TWICE]], -1
; CLEAN:       sampler.counted_leave1:
; CLEAN-NEXT:    [[ALL:%.*]] = shl nuw nsw i64 {{%.*}}, 1
; CLEAN-NEXT:    sub i64 {{%.*}}, [[ALL]]
; CLEAN:         store i64 %sampler.call_countdown.0, ptr [[TLS]], align 8
; CLEAN-NEXT:    ret i32
;
; The input: make_input.sh (beside this file) over the source above as counted.c, with -O2 -fsampler-schemes=branches.

; ModuleID = 'counted.c'
source_filename = "counted.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"


@__sampler_values_branches = internal global [8 x i64] zeroinitializer
@__sampler_scheme_name = private unnamed_addr constant [9 x i8] c"branches\00"
@__sampler_schemes = internal global [1 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 4, i32 2, i32 0, i32 0, ptr @__sampler_values_branches, ptr null, ptr null, ptr null }]
@__sampler_signature = private constant [33 x i8] c"53a27a51a77243a904e5100dab215cc6\00"
@__sampler_weights = internal global [4 x i64] [i64 1, i64 1, i64 1, i64 1]
@__sampler_unit = internal global { i32, i32, ptr, ptr, ptr, i64, ptr, ptr, i32, i32, ptr, i32, i32 } { i32 4, i32 1, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0, ptr @__sampler_weights, ptr null, i32 4, i32 0, ptr null, i32 0, i32 0 }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit, ptr null }]

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable
define dso_local i32 @first_differs(ptr nocapture noundef readonly %0, ptr nocapture noundef readonly %1, i32 noundef %2) local_unnamed_addr #0 !dbg !10 {
  %4 = icmp sgt i32 %2, 0, !dbg !13
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %4, i32 0), !dbg !14
  br i1 %4, label %5, label %21, !dbg !15

5:                                                ; preds = %3
  %6 = zext nneg i32 %2 to i64, !dbg !15
  %7 = zext nneg i32 %2 to i64, !dbg !13
  br label %8, !dbg !15

8:                                                ; preds = %5, %15
  %9 = phi i64 [ 0, %5 ], [ %16, %15 ]
  %10 = getelementptr inbounds i8, ptr %0, i64 %9, !dbg !16
  %11 = load i8, ptr %10, align 1, !dbg !16, !tbaa !17
  %12 = getelementptr inbounds i8, ptr %1, i64 %9, !dbg !20
  %13 = load i8, ptr %12, align 1, !dbg !20, !tbaa !17
  %14 = icmp ne i8 %11, %13, !dbg !21
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %14, i32 1), !dbg !16
  br i1 %14, label %19, label %15, !dbg !16

15:                                               ; preds = %8
  %16 = add nuw nsw i64 %9, 1, !dbg !22
  %17 = icmp ult i64 %16, %6, !dbg !13
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %17, i32 0), !dbg !14
  %18 = icmp eq i64 %16, %7, !dbg !13
  br i1 %18, label %21, label %8, !dbg !15, !llvm.loop !23

19:                                               ; preds = %8
  %20 = trunc nuw nsw i64 %9 to i32
  br label %21, !dbg !26

21:                                               ; preds = %15, %19, %3
  %22 = phi i32 [ -1, %3 ], [ %20, %19 ], [ -1, %15 ]
  ret i32 %22, !dbg !26
}

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable
define dso_local i64 @first_zero(ptr nocapture noundef readonly %0, i64 noundef %1) local_unnamed_addr #0 !dbg !27 {
  %3 = icmp sgt i64 %1, 0, !dbg !28
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %3, i32 2), !dbg !29
  br i1 %3, label %4, label %13, !dbg !30

4:                                                ; preds = %2, %9
  %5 = phi i64 [ %10, %9 ], [ 0, %2 ]
  %6 = getelementptr inbounds i64, ptr %0, i64 %5, !dbg !31
  %7 = load i64, ptr %6, align 8, !dbg !31, !tbaa !32
  %8 = icmp eq i64 %7, 0, !dbg !34
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %8, i32 3), !dbg !31
  br i1 %8, label %13, label %9, !dbg !31

9:                                                ; preds = %4
  %10 = add nuw nsw i64 %5, 1, !dbg !35
  %11 = icmp slt i64 %10, %1, !dbg !28
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %11, i32 2), !dbg !29
  %12 = icmp eq i64 %10, %1, !dbg !28
  br i1 %12, label %13, label %4, !dbg !30, !llvm.loop !36

13:                                               ; preds = %9, %4, %2
  %14 = phi i64 [ -1, %2 ], [ %5, %4 ], [ -1, %9 ]
  ret i64 %14, !dbg !38
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

attributes #0 = { nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nounwind }
attributes #2 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3, !4, !5, !6, !7}
!llvm.ident = !{!8}
!sampler.lowering = !{!9}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "Debian clang version 19.1.7 (3~deb12u1)", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "counted.c", directory: "/tmp/nestir", checksumkind: CSK_MD5, checksum: "005456c0f24a0e8ce6eaf00a730d2192")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 8, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 2}
!8 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!9 = !{!"countdown", !"region", !"timestamps", !"none", !"vectorize-loops", !"on", !"interleave-loops", !"on"}
!10 = distinct !DISubprogram(name: "first_differs", scope: !1, file: !1, line: 1, type: !11, scopeLine: 1, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!11 = !DISubroutineType(types: !12)
!12 = !{}
!13 = !DILocation(line: 2, column: 21, scope: !10)
!14 = !DILocation(line: 2, column: 19, scope: !10)
!15 = !DILocation(line: 2, column: 3, scope: !10)
!16 = !DILocation(line: 3, column: 9, scope: !10)
!17 = !{!18, !18, i64 0}
!18 = !{!"omnipotent char", !19, i64 0}
!19 = !{!"Simple C/C++ TBAA"}
!20 = !DILocation(line: 3, column: 17, scope: !10)
!21 = !DILocation(line: 3, column: 14, scope: !10)
!22 = !DILocation(line: 2, column: 27, scope: !10)
!23 = distinct !{!23, !15, !24, !25}
!24 = !DILocation(line: 3, column: 30, scope: !10)
!25 = !{!"llvm.loop.mustprogress"}
!26 = !DILocation(line: 5, column: 1, scope: !10)
!27 = distinct !DISubprogram(name: "first_zero", scope: !1, file: !1, line: 7, type: !11, scopeLine: 7, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!28 = !DILocation(line: 8, column: 22, scope: !27)
!29 = !DILocation(line: 8, column: 20, scope: !27)
!30 = !DILocation(line: 8, column: 3, scope: !27)
!31 = !DILocation(line: 9, column: 9, scope: !27)
!32 = !{!33, !33, i64 0}
!33 = !{!"long", !18, i64 0}
!34 = !DILocation(line: 9, column: 14, scope: !27)
!35 = !DILocation(line: 8, column: 28, scope: !27)
!36 = distinct !{!36, !30, !37, !25}
!37 = !DILocation(line: 9, column: 27, scope: !27)
!38 = !DILocation(line: 11, column: 1, scope: !27)
