; A region with its check and its slow side: two sites in straight-line code share one check of the thread's
; countdown. Above 2, neither can sample: the fast side (the code without checks) takes 2 off the countdown;
; else the slow side checks each site.
;
;   int clamp(int x, int lo, int hi) {
;     if (x < lo) x = lo;
;     if (x > hi) x = hi;
;     return x;
;   }
;
; RUN: %opt -load-pass-plugin=%passes -passes='sampler-lower<O0>' -S %s | %FileCheck %s
;
; CHECK-LABEL: define dso_local noundef i32 @clamp(
; CHECK:       sampler.entry:
; CHECK:         %sampler.countdown = load i64, ptr %sampler.local_countdown, align 8
; CHECK-NEXT:    %sampler.region_fast = icmp sgt i64 %sampler.countdown, 2
; CHECK-NEXT:    br i1 %sampler.region_fast, label %sampler.region.fast, label %sampler.region
;
; The slow side: each site's own check and slow path (the second site's counters start at 2: two columns).
; CHECK:       sampler.region:
; CHECK:         [[X:%.*]] = sub i64 %sampler.countdown1, 1
; CHECK:         %sampler.take = icmp eq i64 [[X]], 0
; CHECK:         call preserve_mostcc i64 @sampler_take_in_unit(ptr @__sampler_schemes, i64 0, i64
; CHECK:         [[Y:%.*]] = sub i64 %sampler.countdown2, 1
; CHECK:         %sampler.take3 = icmp eq i64 [[Y]], 0
; CHECK:         call preserve_mostcc i64 @sampler_take_in_unit(ptr @__sampler_schemes, i64 2, i64
; CHECK:         ret i32
;
; The fast side: one off the countdown a site, no check.
; CHECK:       sampler.region.fast:
; CHECK-NOT:     icmp
; CHECK:         sub i64 {{%.*}}, 1
; CHECK-NOT:     icmp
; CHECK:         sub i64 {{%.*}}, 1
; CHECK-NOT:     icmp
; CHECK:         ret i32
; CHECK-NEXT:  }
;
; The input: make_input.sh (beside this file) over the source above as region.c, with -O2 -fsampler-schemes=branches.

; ModuleID = 'region.c'
source_filename = "region.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"


@__sampler_values_branches = internal global [4 x i64] zeroinitializer
@__sampler_scheme_name = private unnamed_addr constant [9 x i8] c"branches\00"
@__sampler_schemes = internal global [1 x { ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr }] [{ ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { ptr @__sampler_scheme_name, i32 2, i32 2, i32 0, i32 0, ptr @__sampler_values_branches, ptr null, ptr null, ptr null }]
@__sampler_signature = private constant [33 x i8] c"d9f6bca1848eecc8a47309c6549295e6\00"
@__sampler_unit = internal global { i32, i32, ptr, ptr, ptr, i64 } { i32 2, i32 1, ptr @__sampler_signature, ptr @__sampler_schemes, ptr null, i64 0 }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_register_unit, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @__sampler_unregister_unit, ptr null }]

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(inaccessiblemem: readwrite) uwtable
define dso_local noundef i32 @clamp(i32 noundef %0, i32 noundef %1, i32 noundef %2) local_unnamed_addr #0 !dbg !10 {
  %4 = icmp slt i32 %0, %1, !dbg !13
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %4, i32 0), !dbg !14
  %5 = tail call i32 @llvm.smax.i32(i32 %0, i32 %1), !dbg !14
  %6 = icmp sgt i32 %5, %2, !dbg !15
  tail call void (...) @__sampler.site.branch(ptr nonnull @__sampler_schemes, i1 %6, i32 1), !dbg !16
  %7 = tail call i32 @llvm.smin.i32(i32 %5, i32 %2), !dbg !16
  ret i32 %7, !dbg !17
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

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i32 @llvm.smin.i32(i32, i32) #3

attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(inaccessiblemem: readwrite) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nounwind }
attributes #2 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }
attributes #3 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3, !4, !5, !6, !7}
!llvm.ident = !{!8}
!sampler.lowering = !{!9}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "Debian clang version 19.1.7 (3~deb12u1)", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "region.c", directory: "/tmp/irin", checksumkind: CSK_MD5, checksum: "40fa1c03d9e047de0b437b4d26ddd3a9")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 8, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 2}
!8 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!9 = !{!"countdown", !"region", !"timestamps", !"none", !"vectorize-loops", !"on", !"interleave-loops", !"on"}
!10 = distinct !DISubprogram(name: "clamp", scope: !1, file: !1, line: 1, type: !11, scopeLine: 1, flags: DIFlagPrototyped | DIFlagAllCallsDescribed, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!11 = !DISubroutineType(types: !12)
!12 = !{}
!13 = !DILocation(line: 2, column: 9, scope: !10)
!14 = !DILocation(line: 2, column: 7, scope: !10)
!15 = !DILocation(line: 3, column: 9, scope: !10)
!16 = !DILocation(line: 3, column: 7, scope: !10)
!17 = !DILocation(line: 4, column: 3, scope: !10)
