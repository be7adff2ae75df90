; Twins: a function with a loop gets a copy without sites, f.unsampled, which a thread with sampling off runs;
; f itself becomes the dispatch on the thread's countdown, and f's code with sites moves to f.sampled.
;
;   int sum(const int* a, int n) {
;     int s = 0;
;     for (int i = 0; i < n; i++)
;       if (a[i] > 0) s += a[i];
;     return s;
;   }
;
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s
;
; CHECK-LABEL: define dso_local i32 @sum(
; CHECK-NEXT:  sampler.dispatch:
; CHECK-NEXT:    %sampler.call_countdown.i = alloca i64, align 8
; CHECK-NEXT:    [[TLS:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @sampler_countdown)
; CHECK-NEXT:    [[COUNT:%.*]] = load i64, ptr [[TLS]], align 8
; At most the most sites a call can pass ((2^31 - 1) * 2 + 1, this unit has no weights): the code with sites, after
; one comparison. Above it, out of reach (2^61 and above: sampling is off for this thread) the twin, otherwise the
; counted copy (counted.ll).
; CHECK-NEXT:    %sampler.within = icmp sle i64 [[COUNT]], 4294967295
; CHECK-NEXT:    br i1 %sampler.within, label %sampler.sampled, label %sampler.above
; CHECK-EMPTY:
; CHECK-NEXT:  sampler.unsampled:
; CHECK-NEXT:    [[OFF:%.*]] = musttail call i32 @sum.unsampled(ptr nocapture noundef readonly %0, i32 noundef %1)
; CHECK-NEXT:    ret i32 [[OFF]]
; CHECK-EMPTY:
; CHECK-NEXT:  sampler.above:
; CHECK-NEXT:    %sampler.off = icmp sge i64 [[COUNT]], 2305843009213693952
; CHECK-NEXT:    br i1 %sampler.off, label %sampler.unsampled, label %sampler.counted
; CHECK-EMPTY:
; CHECK-NEXT:  sampler.sampled:
; CHECK-NEXT:    [[ON:%.*]] = musttail call i32 @sum.sampled(ptr nocapture noundef readonly %0, i32 noundef %1)
; CHECK-NEXT:    ret i32 [[ON]]
; CHECK-EMPTY:
; The counted copy's body is the dispatch's own, in place of a tail call (counted.ll).
; CHECK-NEXT:  sampler.counted:
; CHECK-NOT:     musttail
; CHECK:         ret i32
; CHECK-NEXT:  }
; CHECK-NOT:   @sum.counted
;
; The twin: the program's code, without a countdown, a check or a marker.
; CHECK-LABEL: define private i32 @sum.unsampled(
; CHECK-NOT:     sampler
; CHECK:         ret i32
; CHECK-NOT:     sampler
; CHECK:         load i32, ptr
; CHECK-NOT:     sampler
; CHECK:       {{^}}}
;
; The code with sites: the first site's check at the entry.
; CHECK-LABEL: define private i32 @sum.sampled(
; CHECK:       sampler.entry:
; CHECK:         %sampler.take = icmp eq i64
; CHECK:         call preserve_mostcc i64 @sampler_take_in_unit(ptr @__sampler_schemes, i64 0,
;
; The input: make_input.sh (beside this file) over the source above as twins.c, with -O2 -fsampler-schemes=branches.

; ModuleID = 'twins.c'
source_filename = "twins.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"


@__sampler_values_branches = internal global [4 x i64] zeroinitializer
@__sampler_scheme_name = private unnamed_addr constant [9 x i8] c"branches\00"
@__sampler_schemes = internal global [1 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 2, i32 2, i32 0, i32 0, ptr @__sampler_values_branches, ptr null, ptr null, ptr null }]
@__sampler_signature = private constant [33 x i8] c"86c46a95c46988cf2ca090c429c092f4\00"
@__sampler_unit = internal global { i32, i32, ptr, ptr, ptr, i64 } { i32 2, i32 1, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0 }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit, ptr null }]

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read, inaccessiblemem: readwrite) uwtable
define dso_local i32 @sum(ptr nocapture noundef readonly %0, i32 noundef %1) local_unnamed_addr #0 !dbg !10 {
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
!1 = !DIFile(filename: "twins.c", directory: "/tmp/irin", checksumkind: CSK_MD5, checksum: "cea4abedf168036e2b9de9c6425dcdf0")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 8, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 2}
!8 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!9 = !{!"countdown", !"region", !"timestamps", !"none", !"vectorize-loops", !"on", !"interleave-loops", !"on"}
!10 = distinct !DISubprogram(name: "sum", scope: !1, file: !1, line: 1, type: !11, scopeLine: 1, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
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
