; A counted copy's loop counts by iterations (lower_counted.cpp, subtract_by_iterations()): the blocks every
; iteration passes (the loop's own blocks that dominate its latch) do not subtract their sites on the way. With an
; induction variable of a step of 2^s that cannot wrap (`compare`'s k), each exit edge subtracts their sum w times
; the iterations before the last, ((k - its start) >> s), plus those of them the last iteration passed (the ones
; that dominate the block it leaves from); without one (`thirds`' k steps by 3), the latch subtracts w and the
; exit edges before it those the last iteration passed. A block off that path (the arm) keeps its own subtraction
; (docs/decisions.md, "Fast sides: a leaf function's counted copy").
;
;   int compare(const unsigned char* a, unsigned i, unsigned j, unsigned n) {
;     for (unsigned k = 0; k < 8; k++) {
;       if (a[i] != a[j]) return a[i] > a[j];
;       i++;
;       j++;
;       if (i >= n) i -= n;
;     }
;     return 0;
;   }
;
;   int thirds(const unsigned char* a) {
;     int odd = 0;
;     for (unsigned k = 0; k < 300; k += 3) {
;       if (a[k] == 0) return k + odd;
;       if (a[k + 1] > 7) odd++;
;     }
;     return -1;
;   }
;
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s
; RUN: %opt -load-pass-plugin=%passes -passes=sampler-lower -S %s | %FileCheck %s --check-prefix=CLEAN
;
; compare: w = 18 (the header's one site, the block after it, the latch); the header's exit subtracts 18 an
; iteration before and its own 1, the latch's exit 18 an iteration before and the last's 18; the loop's path
; subtracts only in the arm.
; CHECK-LABEL: define dso_local i32 @compare(
; CHECK:       sampler.counted:
; CHECK:         sub i64 {{%.*}}, 5
; CHECK:         br label %[[HEADER:[0-9]+]]
; CHECK:       [[HEADER]]:
; CHECK-NEXT:    [[K:%[0-9]+]] = phi i64 [ 0, %{{[0-9a-z.]+}} ], [ [[NEXT:%[0-9]+]], %[[LATCH:[0-9]+]] ]
; CHECK-NOT:     sub i64
; CHECK:         br i1 {{%.*}}, label %sampler.counted_leave.i, label %[[STAYS:[0-9]+]]
; CHECK:       sampler.counted_leave.i:
; The iterations before the last, (k - 0) >> 0 (folded when the copy's body moves into the dispatch), times w.
; CHECK-NEXT:    [[BEFORE:%.*]] = mul i64 [[K]], 18
; CHECK-NEXT:    [[ALL:%.*]] = add i64 1, [[BEFORE]]
; CHECK-NEXT:    [[LEFT:%.*]] = load i64, ptr %sampler.call_countdown.i
; CHECK-NEXT:    [[AFTER:%.*]] = sub i64 [[LEFT]], [[ALL]]
; CHECK-NEXT:    store i64 [[AFTER]], ptr %sampler.call_countdown.i
; CHECK:       [[STAYS]]:
; CHECK-NOT:     sub i64
; CHECK:         br i1 {{%.*}}, label %[[ARM:[0-9]+]], label %[[LATCH]]
; CHECK:       [[ARM]]:
; CHECK:         sub i64 {{%.*}}, 5
; CHECK:       [[LATCH]]:
; CHECK-NOT:     sub i64
; CHECK:         br i1 {{%.*}}, label %sampler.counted_leave1.i, label %[[HEADER]]
; CHECK:       sampler.counted_leave1.i:
; CHECK-NEXT:    [[BEFORE1:%.*]] = mul i64 [[K]], 18
; CHECK-NEXT:    add i64 18, [[BEFORE1]]
;
; thirds: no induction variable of a step of 2^s; its header's one site subtracted at the latch (with the latch's
; own 4) and on the header's exit edge.
; CHECK-LABEL: define dso_local i32 @thirds(
; CHECK:       sampler.counted:
; CHECK:         sub i64 {{%.*}}, 2
; CHECK:         br label %[[HEADER:[0-9]+]]
; CHECK:       [[HEADER]]:
; CHECK-NOT:     sub i64
; CHECK:         br i1 {{%.*}}, label %sampler.counted_leave.i, label %[[STAYS:[0-9]+]]
; CHECK:       sampler.counted_leave.i:
; CHECK-NEXT:    [[LEFT:%.*]] = load i64, ptr %sampler.call_countdown.i
; CHECK-NEXT:    sub i64 [[LEFT]], 1
; CHECK:       [[STAYS]]:
; CHECK-NOT:     sub i64
; CHECK:         br i1 {{%.*}}, label %[[ARM:[0-9]+]], label %[[LATCH:[0-9]+]]
; CHECK:       [[ARM]]:
; CHECK:         sub i64 {{%.*}}, 2
; CHECK:       [[LATCH]]:
; CHECK:         sub i64 {{%.*}}, 5
; CHECK-NOT:     sub i64
; CHECK:         br i1 {{%.*}}, label %[[HEADER]], label
;
; After the clean-up: compare's latch exit subtracts the loop's 8 iterations at once (18 * 8), and its countdown
; in the loop moves only in the arm's select; thirds' moves once an iteration besides.
; CLEAN-LABEL: define dso_local i32 @compare(
; CLEAN:       sampler.counted:
; CLEAN:         %sampler.call_countdown.i.0 = phi i64
; CLEAN-NOT:     add i64 %sampler.call_countdown.i.0
; CLEAN:       sampler.counted_leave.i:
; CLEAN:         [[ARM:%.*]] = add i64 %sampler.call_countdown.i.0, -5
; CLEAN-NEXT:    %sampler.call_countdown.i.1 = select i1 {{%.*}}, i64 %sampler.call_countdown.i.0, i64 [[ARM]]
; CLEAN-NOT:     add i64 %sampler.call_countdown.i
; CLEAN:       sampler.counted_leave1.i:
; CLEAN-NEXT:    add i64 %sampler.call_countdown.i.1, -144
; CLEAN-LABEL: define dso_local i32 @thirds(
; CLEAN:       sampler.counted:
; CLEAN:         %sampler.call_countdown.i.0 = phi i64
; CLEAN:       sampler.counted_leave.i:
; CLEAN:         add i64 %sampler.call_countdown.i.0, -1
; CLEAN:         %sampler.call_countdown.i.1 = select
; CLEAN:         add i64 %sampler.call_countdown.i.1, -5
;
; The input: make_input.sh (beside this file) over the source above, with -O2.

; ModuleID = 'iter.c'
source_filename = "iter.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"


@__sampler_values_function-entries = internal global [2 x i64] zeroinitializer
@__sampler_scheme_name = private unnamed_addr constant [17 x i8] c"function-entries\00"
@__sampler_values_branches = internal global [12 x i64] zeroinitializer
@__sampler_scheme_name.1 = private unnamed_addr constant [9 x i8] c"branches\00"
@__sampler_values_scalar-pairs = internal global [81 x i64] zeroinitializer
@__sampler_scheme_name.2 = private unnamed_addr constant [13 x i8] c"scalar-pairs\00"
@__sampler_schemes = internal global [3 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 2, i32 1, i32 0, i32 0, ptr @__sampler_values_function-entries, ptr null, ptr null, ptr null }, { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name.1, i32 6, i32 2, i32 0, i32 0, ptr @__sampler_values_branches, ptr null, ptr null, ptr null }, { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name.2, i32 27, i32 3, i32 0, i32 0, ptr @__sampler_values_scalar-pairs, ptr null, ptr null, ptr null }]
@__sampler_signature = private constant [33 x i8] c"077a7982b1838bc354ba1e2b38745713\00"
@__sampler_weights = internal global [35 x i64] [i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1, i64 1]
@__sampler_unit = internal global { i32, i32, ptr, ptr, ptr, i64, ptr, ptr, i32, i32, ptr, i32, i32 } { i32 5, i32 3, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0, ptr @__sampler_weights, ptr null, i32 35, i32 0, ptr null, i32 0, i32 0 }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit, ptr null }]

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable
define dso_local i32 @compare(ptr nocapture noundef readonly %0, i32 noundef %1, i32 noundef %2, i32 noundef %3) local_unnamed_addr #0 !dbg !10 {
  tail call void (...) @__sampler.site.entry(ptr nonnull @__sampler_schemes, i1 false, i32 0), !dbg !13
  %5 = zext i32 %1 to i64, !dbg !14
  %6 = zext i32 %2 to i64, !dbg !14
  %7 = zext i32 %3 to i64, !dbg !14
  tail call void (...) @__sampler.site.pair(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 112), i64 0, i32 0, i64 %5, i32 1, i64 %6, i32 2, i64 %7), !dbg !14
  tail call void (...) @__sampler.site.branch(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 56), i1 true, i32 0), !dbg !15
  br label %8, !dbg !16

8:                                                ; preds = %4, %31
  %9 = phi i64 [ 0, %4 ], [ %34, %31 ]
  %10 = phi i32 [ %2, %4 ], [ %25, %31 ]
  %11 = phi i32 [ %1, %4 ], [ %33, %31 ]
  %12 = zext i32 %11 to i64, !dbg !17
  %13 = getelementptr inbounds i8, ptr %0, i64 %12, !dbg !17
  %14 = load i8, ptr %13, align 1, !dbg !17, !tbaa !18
  %15 = zext i32 %10 to i64, !dbg !21
  %16 = getelementptr inbounds i8, ptr %0, i64 %15, !dbg !21
  %17 = load i8, ptr %16, align 1, !dbg !21, !tbaa !18
  %18 = icmp ne i8 %14, %17, !dbg !22
  tail call void (...) @__sampler.site.branch(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 56), i1 %18, i32 1), !dbg !17
  br i1 %18, label %19, label %22, !dbg !17

19:                                               ; preds = %8
  %20 = icmp ugt i8 %14, %17, !dbg !23
  %21 = zext i1 %20 to i32, !dbg !23
  br label %37, !dbg !24

22:                                               ; preds = %8
  %23 = add i32 %11, 1, !dbg !25
  %24 = zext i32 %23 to i64, !dbg !26
  tail call void (...) @__sampler.site.pair(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 112), i64 %24, i32 3, i64 %12, i32 4, i64 %15, i32 5, i64 %7, i32 6, i64 %9, i32 7, i64 0), !dbg !25
  %25 = add i32 %10, 1, !dbg !27
  %26 = zext i32 %25 to i64, !dbg !28
  tail call void (...) @__sampler.site.pair(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 112), i64 %26, i32 8, i64 %24, i32 9, i64 %15, i32 10, i64 %7, i32 11, i64 %9, i32 12, i64 0), !dbg !27
  %27 = icmp uge i32 %23, %3, !dbg !29
  tail call void (...) @__sampler.site.branch(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 56), i1 %27, i32 2), !dbg !30
  br i1 %27, label %28, label %31, !dbg !30

28:                                               ; preds = %22
  %29 = sub i32 %23, %3, !dbg !31
  %30 = zext i32 %29 to i64, !dbg !32
  tail call void (...) @__sampler.site.pair(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 112), i64 %30, i32 13, i64 %24, i32 14, i64 %26, i32 15, i64 %7, i32 16, i64 %9, i32 17, i64 0), !dbg !31
  br label %31, !dbg !32

31:                                               ; preds = %22, %28
  %32 = phi i64 [ %24, %22 ], [ %30, %28 ], !dbg !33
  %33 = phi i32 [ %23, %22 ], [ %29, %28 ], !dbg !34
  %34 = add nuw nsw i64 %9, 1, !dbg !33
  tail call void (...) @__sampler.site.pair(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 112), i64 %34, i32 18, i64 %32, i32 19, i64 %26, i32 20, i64 %7, i32 21, i64 %9, i32 22, i64 0), !dbg !33
  %35 = icmp ult i64 %9, 7, !dbg !35
  tail call void (...) @__sampler.site.branch(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 56), i1 %35, i32 0), !dbg !15
  %36 = icmp eq i64 %34, 8, !dbg !35
  br i1 %36, label %37, label %8, !dbg !16, !llvm.loop !36

37:                                               ; preds = %31, %19
  %38 = phi i32 [ %21, %19 ], [ 0, %31 ]
  ret i32 %38, !dbg !39
}

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable
define dso_local i32 @thirds(ptr nocapture noundef readonly %0) local_unnamed_addr #0 !dbg !40 {
  tail call void (...) @__sampler.site.entry(ptr nonnull @__sampler_schemes, i1 false, i32 1), !dbg !41
  tail call void (...) @__sampler.site.branch(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 56), i1 true, i32 3), !dbg !42
  br label %2, !dbg !43

2:                                                ; preds = %1, %19
  %3 = phi i64 [ 0, %1 ], [ %21, %19 ]
  %4 = phi i32 [ 0, %1 ], [ %20, %19 ]
  %5 = getelementptr inbounds i8, ptr %0, i64 %3, !dbg !44
  %6 = load i8, ptr %5, align 1, !dbg !44, !tbaa !18
  %7 = icmp eq i8 %6, 0, !dbg !45
  tail call void (...) @__sampler.site.branch(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 56), i1 %7, i32 4), !dbg !44
  br i1 %7, label %8, label %11, !dbg !44

8:                                                ; preds = %2
  %9 = trunc nuw nsw i64 %3 to i32, !dbg !46
  %10 = add i32 %4, %9, !dbg !46
  br label %23, !dbg !47

11:                                               ; preds = %2
  %12 = getelementptr inbounds i8, ptr %5, i64 1, !dbg !48
  %13 = load i8, ptr %12, align 1, !dbg !48, !tbaa !18
  %14 = icmp ugt i8 %13, 7, !dbg !49
  tail call void (...) @__sampler.site.branch(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 56), i1 %14, i32 5), !dbg !48
  br i1 %14, label %15, label %19, !dbg !48

15:                                               ; preds = %11
  %16 = sext i32 %4 to i64, !dbg !50
  %17 = add nsw i32 %4, 1, !dbg !51
  %18 = sext i32 %17 to i64, !dbg !50
  tail call void (...) @__sampler.site.pair.signed(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 112), i64 %18, i32 23, i64 %16, i32 24, i64 0), !dbg !51
  br label %19, !dbg !50

19:                                               ; preds = %11, %15
  %20 = phi i32 [ %17, %15 ], [ %4, %11 ], !dbg !52
  %21 = add nuw nsw i64 %3, 3, !dbg !53
  tail call void (...) @__sampler.site.pair(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 112), i64 %21, i32 25, i64 %3, i32 26, i64 0), !dbg !53
  %22 = icmp ult i64 %3, 297, !dbg !54
  tail call void (...) @__sampler.site.branch(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 56), i1 %22, i32 3), !dbg !42
  br i1 %22, label %2, label %23, !dbg !43, !llvm.loop !55

23:                                               ; preds = %19, %8
  %24 = phi i32 [ %10, %8 ], [ -1, %19 ]
  ret i32 %24, !dbg !57
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
declare void @__sampler.site.entry(...) local_unnamed_addr #2

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @__sampler.site.pair(...) local_unnamed_addr #2

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @__sampler.site.branch(...) local_unnamed_addr #2

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @__sampler.site.pair.signed(...) local_unnamed_addr #2

attributes #0 = { nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nounwind }
attributes #2 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3, !4, !5, !6, !7}
!llvm.ident = !{!8}
!sampler.lowering = !{!9}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "Debian clang version 19.1.7 (3~deb12u1)", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "iter.c", directory: "/tmp/fs-t", checksumkind: CSK_MD5, checksum: "bf0c128dfd99f0d09a4dfa248c2d97be")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 8, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 2}
!8 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!9 = !{!"countdown", !"region", !"timestamps", !"none", !"vectorize-loops", !"on", !"interleave-loops", !"on"}
!10 = distinct !DISubprogram(name: "compare", scope: !1, file: !1, line: 1, type: !11, scopeLine: 1, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!11 = !DISubroutineType(types: !12)
!12 = !{}
!13 = !DILocation(line: 1, scope: !10)
!14 = !DILocation(line: 2, column: 17, scope: !10)
!15 = !DILocation(line: 2, column: 24, scope: !10)
!16 = !DILocation(line: 2, column: 3, scope: !10)
!17 = !DILocation(line: 3, column: 9, scope: !10)
!18 = !{!19, !19, i64 0}
!19 = !{!"omnipotent char", !20, i64 0}
!20 = !{!"Simple C/C++ TBAA"}
!21 = !DILocation(line: 3, column: 17, scope: !10)
!22 = !DILocation(line: 3, column: 14, scope: !10)
!23 = !DILocation(line: 3, column: 35, scope: !10)
!24 = !DILocation(line: 3, column: 23, scope: !10)
!25 = !DILocation(line: 4, column: 6, scope: !10)
!26 = !DILocation(line: 4, column: 5, scope: !10)
!27 = !DILocation(line: 5, column: 6, scope: !10)
!28 = !DILocation(line: 5, column: 5, scope: !10)
!29 = !DILocation(line: 6, column: 11, scope: !10)
!30 = !DILocation(line: 6, column: 9, scope: !10)
!31 = !DILocation(line: 6, column: 19, scope: !10)
!32 = !DILocation(line: 6, column: 17, scope: !10)
!33 = !DILocation(line: 2, column: 32, scope: !10)
!34 = !DILocation(line: 0, scope: !10)
!35 = !DILocation(line: 2, column: 26, scope: !10)
!36 = distinct !{!36, !16, !37, !38}
!37 = !DILocation(line: 7, column: 3, scope: !10)
!38 = !{!"llvm.loop.mustprogress"}
!39 = !DILocation(line: 9, column: 1, scope: !10)
!40 = distinct !DISubprogram(name: "thirds", scope: !1, file: !1, line: 11, type: !11, scopeLine: 11, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!41 = !DILocation(line: 11, scope: !40)
!42 = !DILocation(line: 13, column: 24, scope: !40)
!43 = !DILocation(line: 13, column: 3, scope: !40)
!44 = !DILocation(line: 14, column: 9, scope: !40)
!45 = !DILocation(line: 14, column: 14, scope: !40)
!46 = !DILocation(line: 14, column: 29, scope: !40)
!47 = !DILocation(line: 14, column: 20, scope: !40)
!48 = !DILocation(line: 15, column: 9, scope: !40)
!49 = !DILocation(line: 15, column: 18, scope: !40)
!50 = !DILocation(line: 15, column: 23, scope: !40)
!51 = !DILocation(line: 15, column: 26, scope: !40)
!52 = !DILocation(line: 0, scope: !40)
!53 = !DILocation(line: 13, column: 35, scope: !40)
!54 = !DILocation(line: 13, column: 26, scope: !40)
!55 = distinct !{!55, !43, !56, !38}
!56 = !DILocation(line: 16, column: 3, scope: !40)
!57 = !DILocation(line: 18, column: 1, scope: !40)
