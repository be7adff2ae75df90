; Each default scheme's lowering, one check a site (-fsampler-countdown=site, which the module's
; !sampler.lowering carries): function-entries, returns, scalar-pairs, branches. The input's unit is of ABI
; version 2 (no weights, as the hand macros' units): each site subtracts 1 and tests for 0 (collect.ll has a
; unit with weights). Each site's fast path takes one
; off the thread's countdown and calls the unit's slow path when it reaches 0; scalar-pairs' sites of one
; assignment share one check. The scheme table's entries are 56 bytes apart: function-entries at 0, branches
; at 56, returns at 112, scalar-pairs at 168.
;
;   int next(int);
;   int step(int x) {
;     int y = next(x);
;     if (y > x) y = x;
;     return y;
;   }
;
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s --check-prefix=GONE
;
; CHECK-LABEL: define dso_local i32 @step(
; CHECK-NOT:     sampler.region_fast
;
; function-entries: before the function's code.
; CHECK:         [[TLS:%.*]] = call ptr @llvm.threadlocal.address.p0(ptr @sampler_countdown)
; CHECK-NEXT:    %sampler.countdown = load i64, ptr [[TLS]], align 8
; CHECK-NEXT:    [[LEFT:%.*]] = sub i64 %sampler.countdown, 1
; CHECK-NEXT:    store i64 [[LEFT]], ptr [[TLS]], align 8
; CHECK-NEXT:    %sampler.take = icmp eq i64 [[LEFT]], 0
; CHECK-NEXT:    br i1 %sampler.take, label %[[SLOW:[0-9]+]], label %{{[0-9]+}}
; CHECK:       {{^}}[[SLOW]]:
; CHECK-NEXT:    call preserve_mostcc i64 @sampler_take_in_unit(ptr @__sampler_schemes, i64 0, i64 0, i64 0, i64 [[LEFT]])
;
; returns: the value the call returned, classified as signed.
; CHECK:         [[Y:%.*]] = tail call i32 @next(i32 noundef %0)
; CHECK:         %sampler.take2 = icmp eq i64
; CHECK:         [[WIDE:%.*]] = sext i32 [[Y]] to i64
; CHECK-NEXT:    call preserve_mostcc i64 @sampler_take_compare_in_unit(ptr getelementptr inbounds (i8, ptr @__sampler_schemes, i64 112), i64 0, i64 [[WIDE]], i64 0, i64 {{%.*}})
;
; scalar-pairs: y against x and against the constant 0 (sampler.pair_constants), one check for both: above 2,
; neither can sample.
; CHECK:         %sampler.skip = icmp sgt i64 %sampler.countdown3, 2
; CHECK:         sub i64 %sampler.countdown3, 2
; CHECK:         @sampler_take_compares_in_unit(ptr {{%.*}}, i64 2, i64 {{%.*}}, ptr %sampler.pair_operands, ptr @sampler.pair_constants, i64 %sampler.countdown3)
;
; branches: the condition, as the counter's column.
; CHECK:         [[COND:%.*]] = icmp sgt i32 [[Y]], %0
; CHECK:         %sampler.take8 = icmp eq i64
; CHECK:         [[COLUMN:%.*]] = zext i1 [[COND]] to i64
; CHECK-NEXT:    call preserve_mostcc i64 @sampler_take_in_unit(ptr getelementptr inbounds (i8, ptr @__sampler_schemes, i64 56), i64 0, i64 [[COLUMN]], i64 0, i64 {{%.*}})
; CHECK:         br i1 [[COND]],
;
; scalar-pairs again, in the then-arm (x = y ... after `y = x`): its sites are 2 and 3, its counters from 6.
; CHECK:         %sampler.skip5 = icmp sgt i64 %sampler.countdown4, 2
; CHECK:         getelementptr inbounds i64, ptr %sampler.values6, i64 6
; CHECK:         ret i32
;
; No marker is left, and the settings do not reach the object file.
; GONE-NOT:      call void (...) @__sampler.site
; GONE-NOT:      !sampler.lowering
;
; The input: make_input.sh (beside this file) over the source above as schemes.c, with -O2 -fsampler-countdown=site.

; ModuleID = 'schemes.c'
source_filename = "schemes.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"


@__sampler_values_function-entries = internal global [1 x i64] zeroinitializer
@__sampler_scheme_name = private unnamed_addr constant [17 x i8] c"function-entries\00"
@__sampler_values_branches = internal global [2 x i64] zeroinitializer
@__sampler_scheme_name.1 = private unnamed_addr constant [9 x i8] c"branches\00"
@__sampler_values_returns = internal global [3 x i64] zeroinitializer
@__sampler_scheme_name.2 = private unnamed_addr constant [8 x i8] c"returns\00"
@__sampler_values_scalar-pairs = internal global [12 x i64] zeroinitializer
@__sampler_scheme_name.3 = private unnamed_addr constant [13 x i8] c"scalar-pairs\00"
@__sampler_schemes = internal global [4 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 1, i32 1, i32 0, i32 0, ptr @__sampler_values_function-entries, ptr null, ptr null, ptr null }, { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name.1, i32 1, i32 2, i32 0, i32 0, ptr @__sampler_values_branches, ptr null, ptr null, ptr null }, { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name.2, i32 1, i32 3, i32 0, i32 0, ptr @__sampler_values_returns, ptr null, ptr null, ptr null }, { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name.3, i32 4, i32 3, i32 0, i32 0, ptr @__sampler_values_scalar-pairs, ptr null, ptr null, ptr null }]
@__sampler_signature = private constant [33 x i8] c"200c7d164037b824f804669bec008665\00"
@__sampler_unit = internal global { i32, i32, ptr, ptr, ptr, i64 } { i32 2, i32 4, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0 }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit, ptr null }]

; Function Attrs: nounwind uwtable
define dso_local i32 @step(i32 noundef %0) local_unnamed_addr #0 !dbg !10 {
  tail call void (...) @__sampler.site.entry(ptr nonnull @__sampler_schemes, i1 false, i32 0), !dbg !13
  %2 = tail call i32 @next(i32 noundef %0) #2, !dbg !14
  tail call void (...) @__sampler.site.return.signed(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 112), i32 %2, i32 0), !dbg !14
  %3 = sext i32 %2 to i64, !dbg !15
  %4 = sext i32 %0 to i64, !dbg !15
  tail call void (...) @__sampler.site.pair.signed(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 168), i64 %3, i32 0, i64 %4, i32 1, i64 0), !dbg !15
  %5 = icmp sgt i32 %2, %0, !dbg !16
  tail call void (...) @__sampler.site.branch(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 56), i1 %5, i32 0), !dbg !17
  br i1 %5, label %6, label %7, !dbg !17

6:                                                ; preds = %1
  tail call void (...) @__sampler.site.pair.signed(ptr nonnull getelementptr inbounds (i8, ptr @__sampler_schemes, i64 168), i64 %4, i32 2, i64 %3, i32 3, i64 0), !dbg !18
  br label %7, !dbg !19

7:                                                ; preds = %6, %1
  %8 = phi i32 [ %0, %6 ], [ %2, %1 ], !dbg !20
  ret i32 %8, !dbg !21
}

declare !dbg !22 i32 @next(i32 noundef) local_unnamed_addr #1

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
declare void @__sampler.site.entry(...) local_unnamed_addr #3

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @__sampler.site.return.signed(...) local_unnamed_addr #3

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @__sampler.site.pair.signed(...) local_unnamed_addr #3

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @__sampler.site.branch(...) local_unnamed_addr #3

attributes #0 = { nounwind uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #2 = { nounwind }
attributes #3 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3, !4, !5, !6, !7}
!llvm.ident = !{!8}
!sampler.lowering = !{!9}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "Debian clang version 19.1.7 (3~deb12u1)", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "schemes.c", directory: "/tmp/irin", checksumkind: CSK_MD5, checksum: "05c142e4421e5cf52c28494e113d8f3d")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 8, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 2}
!8 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!9 = !{!"countdown", !"site", !"timestamps", !"none", !"vectorize-loops", !"on", !"interleave-loops", !"on"}
!10 = distinct !DISubprogram(name: "step", scope: !1, file: !1, line: 2, type: !11, scopeLine: 2, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!11 = !DISubroutineType(types: !12)
!12 = !{}
!13 = !DILocation(line: 2, scope: !10)
!14 = !DILocation(line: 3, column: 11, scope: !10)
!15 = !DILocation(line: 3, column: 7, scope: !10)
!16 = !DILocation(line: 4, column: 9, scope: !10)
!17 = !DILocation(line: 4, column: 7, scope: !10)
!18 = !DILocation(line: 4, column: 16, scope: !10)
!19 = !DILocation(line: 4, column: 14, scope: !10)
!20 = !DILocation(line: 0, scope: !10)
!21 = !DILocation(line: 5, column: 3, scope: !10)
!22 = !DISubprogram(name: "next", scope: !1, file: !1, line: 1, type: !11, flags: DIFlagPrototyped, spFlags: DISPFlagOptimized)
