; A fast side's exit: the program compares the two bytes once (`c1 != c2`) and returns `c1 > c2` from the same
; flags in plain clang's code. instcombine sinks the fast block's subtraction of its stretch into the exit that
; uses it, at the top of the exit's block, before `c1 > c2`; after the clean-up the subtraction goes down to its
; first use (the countdown's store), so that no subtraction comes between the program's comparison and the setcc
; reading its flags (bzip2's mainGtU; docs/performance.md, "The exits' subtractions after the program's
; comparison").
;
;   int greater(const unsigned char* a, unsigned i, unsigned j, int n) {
;     unsigned char c1 = a[i], c2 = a[j];
;     if (c1 != c2) return c1 > c2;
;     i++; j++;
;     c1 = a[i]; c2 = a[j];
;     if (c1 != c2) return c1 > c2;
;     i++; j++;
;     do {
;       c1 = a[i]; c2 = a[j];
;       if (c1 != c2) return c1 > c2;
;       i++; j++;
;       n--;
;     } while (n >= 0);
;     return 0;
;   }
;
; RUN: %opt -load-pass-plugin=%passes -passes=sampler-lower -S %s | %FileCheck %s
;
; CHECK-LABEL: define private range(i32 0, 2) i32 @greater.sampled(
; CHECK:       sampler.region.fast:
; CHECK:         [[C1:%.*]] = load i8
; CHECK:         [[C2:%.*]] = load i8
; CHECK:         icmp eq i8 [[C1]], [[C2]]
; CHECK:       sampler.leave2:
; CHECK-NEXT:    [[GREATER:%.*]] = icmp ugt i8 [[C1]], [[C2]]
; CHECK-NEXT:    [[ENTRY:%.*]] = load i64, ptr getelementptr inbounds (i8, ptr @__sampler_thresholds, i64 16)
; CHECK-NEXT:    [[LEFT:%.*]] = sub i64 {{%.*}}, [[ENTRY]]
; CHECK-NEXT:    store i64 [[LEFT]], ptr
; CHECK-NEXT:    br label
;
; The input: make_input.sh (beside this file) over the source above as exit_flags.c, with -O2
; -fsampler-schemes=branches.

; ModuleID = 'exit_flags.c'
source_filename = "exit_flags.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"


@__sampler_values_branches = internal global [8 x i64] zeroinitializer
@__sampler_scheme_name = private unnamed_addr constant [9 x i8] c"branches\00"
@__sampler_schemes = internal global [1 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 4, i32 2, i32 0, i32 0, ptr @__sampler_values_branches, ptr null, ptr null, ptr null }]
@__sampler_signature = private constant [33 x i8] c"5c38c243e063e8dc83ad4b25aa4fe12a\00"
@__sampler_weights = internal global [4 x i64] [i64 1, i64 1, i64 1, i64 1]
@__sampler_unit = internal global { i32, i32, ptr, ptr, ptr, i64, ptr, ptr, i32, i32, ptr, i32, i32 } { i32 4, i32 1, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0, ptr @__sampler_weights, ptr null, i32 4, i32 0, ptr null, i32 0, i32 0 }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit, ptr null }]

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable
define dso_local range(i32 0, 2) i32 @greater(ptr nocapture noundef readonly %0, i32 noundef %1, i32 noundef %2, i32 noundef %3) local_unnamed_addr #0 !dbg !10 {
  %5 = zext i32 %1 to i64, !dbg !13
  %6 = getelementptr inbounds i8, ptr %0, i64 %5, !dbg !13
  %7 = load i8, ptr %6, align 1, !dbg !13, !tbaa !14
  %8 = zext i32 %2 to i64, !dbg !17
  %9 = getelementptr inbounds i8, ptr %0, i64 %8, !dbg !17
  %10 = load i8, ptr %9, align 1, !dbg !17, !tbaa !14
  %11 = icmp ne i8 %7, %10, !dbg !18
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %11, i32 0), !dbg !19
  br i1 %11, label %12, label %14, !dbg !19

12:                                               ; preds = %4
  %13 = icmp ugt i8 %7, %10, !dbg !20
  br label %47, !dbg !21

14:                                               ; preds = %4
  %15 = add i32 %1, 1, !dbg !22
  %16 = add i32 %2, 1, !dbg !23
  %17 = zext i32 %15 to i64, !dbg !24
  %18 = getelementptr inbounds i8, ptr %0, i64 %17, !dbg !24
  %19 = load i8, ptr %18, align 1, !dbg !24, !tbaa !14
  %20 = zext i32 %16 to i64, !dbg !25
  %21 = getelementptr inbounds i8, ptr %0, i64 %20, !dbg !25
  %22 = load i8, ptr %21, align 1, !dbg !25, !tbaa !14
  %23 = icmp ne i8 %19, %22, !dbg !26
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %23, i32 1), !dbg !27
  br i1 %23, label %24, label %26, !dbg !27

24:                                               ; preds = %14
  %25 = icmp ugt i8 %19, %22, !dbg !28
  br label %47, !dbg !29

26:                                               ; preds = %14
  %27 = add i32 %1, 2, !dbg !30
  %28 = add i32 %2, 2, !dbg !31
  br label %29, !dbg !32

29:                                               ; preds = %42, %26
  %30 = phi i32 [ %27, %26 ], [ %43, %42 ], !dbg !33
  %31 = phi i32 [ %28, %26 ], [ %44, %42 ], !dbg !33
  %32 = phi i32 [ %3, %26 ], [ %45, %42 ]
  %33 = zext i32 %30 to i64, !dbg !34
  %34 = getelementptr inbounds i8, ptr %0, i64 %33, !dbg !34
  %35 = load i8, ptr %34, align 1, !dbg !34, !tbaa !14
  %36 = zext i32 %31 to i64, !dbg !35
  %37 = getelementptr inbounds i8, ptr %0, i64 %36, !dbg !35
  %38 = load i8, ptr %37, align 1, !dbg !35, !tbaa !14
  %39 = icmp ne i8 %35, %38, !dbg !36
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %39, i32 2), !dbg !37
  br i1 %39, label %40, label %42, !dbg !37

40:                                               ; preds = %29
  %41 = icmp ugt i8 %35, %38, !dbg !38
  br label %47, !dbg !39

42:                                               ; preds = %29
  %43 = add i32 %30, 1, !dbg !40
  %44 = add i32 %31, 1, !dbg !41
  %45 = add nsw i32 %32, -1, !dbg !42
  %46 = icmp sgt i32 %32, 0, !dbg !43
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %46, i32 3), !dbg !44
  br i1 %46, label %29, label %47, !dbg !45, !llvm.loop !46

47:                                               ; preds = %42, %40, %24, %12
  %48 = phi i1 [ %13, %12 ], [ %25, %24 ], [ %41, %40 ], [ false, %42 ]
  %49 = zext i1 %48 to i32, !dbg !33
  ret i32 %49, !dbg !49
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
!1 = !DIFile(filename: "exit_flags.c", directory: "/tmp/irin", checksumkind: CSK_MD5, checksum: "99bd5f51040f64b181297700f0557e2e")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 8, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 2}
!8 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!9 = !{!"countdown", !"region", !"timestamps", !"none", !"vectorize-loops", !"on", !"interleave-loops", !"on"}
!10 = distinct !DISubprogram(name: "greater", scope: !1, file: !1, line: 1, type: !11, scopeLine: 1, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!11 = !DISubroutineType(types: !12)
!12 = !{}
!13 = !DILocation(line: 2, column: 22, scope: !10)
!14 = !{!15, !15, i64 0}
!15 = !{!"omnipotent char", !16, i64 0}
!16 = !{!"Simple C/C++ TBAA"}
!17 = !DILocation(line: 2, column: 33, scope: !10)
!18 = !DILocation(line: 3, column: 10, scope: !10)
!19 = !DILocation(line: 3, column: 7, scope: !10)
!20 = !DILocation(line: 3, column: 27, scope: !10)
!21 = !DILocation(line: 3, column: 17, scope: !10)
!22 = !DILocation(line: 4, column: 4, scope: !10)
!23 = !DILocation(line: 4, column: 9, scope: !10)
!24 = !DILocation(line: 5, column: 8, scope: !10)
!25 = !DILocation(line: 5, column: 19, scope: !10)
!26 = !DILocation(line: 6, column: 10, scope: !10)
!27 = !DILocation(line: 6, column: 7, scope: !10)
!28 = !DILocation(line: 6, column: 27, scope: !10)
!29 = !DILocation(line: 6, column: 17, scope: !10)
!30 = !DILocation(line: 7, column: 4, scope: !10)
!31 = !DILocation(line: 7, column: 9, scope: !10)
!32 = !DILocation(line: 8, column: 3, scope: !10)
!33 = !DILocation(line: 0, scope: !10)
!34 = !DILocation(line: 9, column: 10, scope: !10)
!35 = !DILocation(line: 9, column: 21, scope: !10)
!36 = !DILocation(line: 10, column: 12, scope: !10)
!37 = !DILocation(line: 10, column: 9, scope: !10)
!38 = !DILocation(line: 10, column: 29, scope: !10)
!39 = !DILocation(line: 10, column: 19, scope: !10)
!40 = !DILocation(line: 11, column: 6, scope: !10)
!41 = !DILocation(line: 11, column: 11, scope: !10)
!42 = !DILocation(line: 12, column: 6, scope: !10)
!43 = !DILocation(line: 13, column: 14, scope: !10)
!44 = !DILocation(line: 13, column: 12, scope: !10)
!45 = !DILocation(line: 13, column: 3, scope: !10)
!46 = distinct !{!46, !32, !47, !48}
!47 = !DILocation(line: 13, column: 18, scope: !10)
!48 = !{!"llvm.loop.mustprogress"}
!49 = !DILocation(line: 15, column: 1, scope: !10)
