; Which loops with an exit SCEV cannot count are checked once at their entry. `digits` leaves only by its
; inductions, as bc's digit loops do: SCEV counts `i` but not the pointer going down (for want of a no-wrap flag),
; and the count of `i`'s exit bounds the trips, so the loop gets its guard and its copy without checks. `early`
; also leaves on its data (`p[i] != q[i]`), like bzip2's mainGtU: it may leave after one iteration of a large bound,
; and keeps its region check each iteration, without a guard (docs/decisions.md, "Fast sides: a loop's check at
; its entry").
;
;   int digits(const unsigned char* p, const unsigned char* base, const unsigned char* q, int i) {
;     int s = 0;
;     while (p >= base && i <= 0) {
;       if (*p-- > q[i++]) s++;
;     }
;     return s;
;   }
;   int early(const unsigned char* p, const unsigned char* q, int n) {
;     for (int i = 0; i < n; i++)
;       if (p[i] != q[i]) return p[i] > q[i];
;     return 0;
;   }
;
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s
;
; The bound: the count of `i`'s exit (from i up to 1), plus one, times three sites an iteration (the two exits'
; branches and the if's).
; CHECK-LABEL: define private i32 @digits.sampled(
; CHECK:         [[UP:%.*]] = tail call i32 @llvm.smax.i32(i32 %3, i32 1)
; CHECK:       sampler.loop_guard:
; CHECK:         %sampler.loop_sites = mul i64 {{%.*}}, 3
; CHECK-NEXT:    %sampler.loop_fast = icmp sgt i64 %sampler.countdown, %sampler.loop_sites
; CHECK:       sampler.loop_leave:
;
; CHECK-LABEL: define private i32 @early.sampled(
; CHECK-NOT:   sampler.loop_guard:
; CHECK:         %sampler.region_fast = icmp sgt i64
; CHECK-NOT:   sampler.loop_guard:
; CHECK-LABEL: define internal preserve_mostcc i64 @sampler_take_in_unit(
;
; The input: make_input.sh (beside this file) over the source above as exits.c, with -O2 -fsampler-schemes=branches.

; ModuleID = 'exits.c'
source_filename = "exits.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"


@__sampler_values_branches = internal global [10 x i64] zeroinitializer
@__sampler_scheme_name = private unnamed_addr constant [9 x i8] c"branches\00"
@__sampler_schemes = internal global [1 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 5, i32 2, i32 0, i32 0, ptr @__sampler_values_branches, ptr null, ptr null, ptr null }]
@__sampler_signature = private constant [33 x i8] c"ddcb1d5c040f21917534e710e3d38e33\00"
@__sampler_weights = internal global [5 x i64] [i64 1, i64 1, i64 1, i64 1, i64 1]
@__sampler_unit = internal global { i32, i32, ptr, ptr, ptr, i64, ptr, ptr, i32, i32, ptr, i32, i32 } { i32 4, i32 1, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0, ptr @__sampler_weights, ptr null, i32 5, i32 0, ptr null, i32 0, i32 0 }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit, ptr null }]

; Function Attrs: nofree norecurse nosync nounwind memory(read, inaccessiblemem: readwrite) uwtable
define dso_local i32 @digits(ptr noundef readonly %0, ptr noundef readnone %1, ptr nocapture noundef readonly %2, i32 noundef %3) local_unnamed_addr #0 !dbg !10 {
  %5 = icmp uge ptr %0, %1, !dbg !13
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %5, i32 0), !dbg !14
  br i1 %5, label %6, label %26, !dbg !15

6:                                                ; preds = %4
  %7 = sext i32 %3 to i64, !dbg !16
  %8 = tail call i32 @llvm.smax.i32(i32 %3, i32 1), !dbg !16
  %9 = zext nneg i32 %8 to i64, !dbg !17
  br label %10, !dbg !16

10:                                               ; preds = %6, %16
  %11 = phi i64 [ %7, %6 ], [ %19, %16 ]
  %12 = phi i32 [ 0, %6 ], [ %24, %16 ]
  %13 = phi ptr [ %0, %6 ], [ %17, %16 ]
  %14 = icmp slt i64 %11, 1, !dbg !17
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %14, i32 1), !dbg !18
  %15 = icmp eq i64 %11, %9, !dbg !17
  br i1 %15, label %26, label %16, !dbg !16

16:                                               ; preds = %10
  %17 = getelementptr inbounds i8, ptr %13, i64 -1, !dbg !19
  %18 = load i8, ptr %13, align 1, !dbg !20, !tbaa !21
  %19 = add nsw i64 %11, 1, !dbg !24
  %20 = getelementptr inbounds i8, ptr %2, i64 %11, !dbg !25
  %21 = load i8, ptr %20, align 1, !dbg !25, !tbaa !21
  %22 = icmp ugt i8 %18, %21, !dbg !26
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %22, i32 2), !dbg !20
  %23 = zext i1 %22 to i32, !dbg !20
  %24 = add nuw nsw i32 %12, %23, !dbg !20
  %25 = icmp uge ptr %17, %1, !dbg !13
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %25, i32 0), !dbg !14
  br i1 %25, label %10, label %26, !dbg !15, !llvm.loop !27

26:                                               ; preds = %10, %16, %4
  %27 = phi i32 [ 0, %4 ], [ %24, %16 ], [ %12, %10 ], !dbg !30
  ret i32 %27, !dbg !31
}

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable
define dso_local i32 @early(ptr nocapture noundef readonly %0, ptr nocapture noundef readonly %1, i32 noundef %2) local_unnamed_addr #1 !dbg !32 {
  %4 = icmp sgt i32 %2, 0, !dbg !33
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %4, i32 3), !dbg !34
  br i1 %4, label %5, label %22, !dbg !35

5:                                                ; preds = %3
  %6 = zext nneg i32 %2 to i64, !dbg !35
  %7 = zext nneg i32 %2 to i64, !dbg !33
  br label %12, !dbg !35

8:                                                ; preds = %12
  %9 = add nuw nsw i64 %13, 1, !dbg !36
  %10 = icmp ult i64 %9, %6, !dbg !33
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %10, i32 3), !dbg !34
  %11 = icmp eq i64 %9, %7, !dbg !33
  br i1 %11, label %22, label %12, !dbg !35, !llvm.loop !37

12:                                               ; preds = %5, %8
  %13 = phi i64 [ 0, %5 ], [ %9, %8 ]
  %14 = getelementptr inbounds i8, ptr %0, i64 %13, !dbg !39
  %15 = load i8, ptr %14, align 1, !dbg !39, !tbaa !21
  %16 = getelementptr inbounds i8, ptr %1, i64 %13, !dbg !40
  %17 = load i8, ptr %16, align 1, !dbg !40, !tbaa !21
  %18 = icmp ne i8 %15, %17, !dbg !41
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %18, i32 4), !dbg !39
  br i1 %18, label %19, label %8, !dbg !39

19:                                               ; preds = %12
  %20 = icmp ugt i8 %15, %17, !dbg !42
  %21 = zext i1 %20 to i32, !dbg !42
  br label %22, !dbg !43

22:                                               ; preds = %8, %3, %19
  %23 = phi i32 [ %21, %19 ], [ 0, %3 ], [ 0, %8 ]
  ret i32 %23, !dbg !44
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

attributes #0 = { nofree norecurse nosync nounwind memory(read, inaccessiblemem: readwrite) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #2 = { nounwind }
attributes #3 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }
attributes #4 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3, !4, !5, !6, !7}
!llvm.ident = !{!8}
!sampler.lowering = !{!9}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "Debian clang version 19.1.7 (3~deb12u1)", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "exits.c", directory: "/tmp/irin", checksumkind: CSK_MD5, checksum: "f83707ce4fa6adb681d1f36e25368f70")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 8, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 2}
!8 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!9 = !{!"countdown", !"region", !"timestamps", !"none", !"vectorize-loops", !"on", !"interleave-loops", !"on"}
!10 = distinct !DISubprogram(name: "digits", scope: !1, file: !1, line: 1, type: !11, scopeLine: 1, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!11 = !DISubroutineType(types: !12)
!12 = !{}
!13 = !DILocation(line: 3, column: 12, scope: !10)
!14 = !DILocation(line: 3, column: 10, scope: !10)
!15 = !DILocation(line: 3, column: 20, scope: !10)
!16 = !DILocation(line: 3, column: 3, scope: !10)
!17 = !DILocation(line: 3, column: 25, scope: !10)
!18 = !DILocation(line: 3, column: 23, scope: !10)
!19 = !DILocation(line: 4, column: 11, scope: !10)
!20 = !DILocation(line: 4, column: 9, scope: !10)
!21 = !{!22, !22, i64 0}
!22 = !{!"omnipotent char", !23, i64 0}
!23 = !{!"Simple C/C++ TBAA"}
!24 = !DILocation(line: 4, column: 19, scope: !10)
!25 = !DILocation(line: 4, column: 16, scope: !10)
!26 = !DILocation(line: 4, column: 14, scope: !10)
!27 = distinct !{!27, !16, !28, !29}
!28 = !DILocation(line: 5, column: 3, scope: !10)
!29 = !{!"llvm.loop.mustprogress"}
!30 = !DILocation(line: 0, scope: !10)
!31 = !DILocation(line: 6, column: 3, scope: !10)
!32 = distinct !DISubprogram(name: "early", scope: !1, file: !1, line: 8, type: !11, scopeLine: 8, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!33 = !DILocation(line: 9, column: 21, scope: !32)
!34 = !DILocation(line: 9, column: 19, scope: !32)
!35 = !DILocation(line: 9, column: 3, scope: !32)
!36 = !DILocation(line: 9, column: 27, scope: !32)
!37 = distinct !{!37, !35, !38, !29}
!38 = !DILocation(line: 10, column: 40, scope: !32)
!39 = !DILocation(line: 10, column: 9, scope: !32)
!40 = !DILocation(line: 10, column: 17, scope: !32)
!41 = !DILocation(line: 10, column: 14, scope: !32)
!42 = !DILocation(line: 10, column: 35, scope: !32)
!43 = !DILocation(line: 10, column: 23, scope: !32)
!44 = !DILocation(line: 12, column: 1, scope: !32)
