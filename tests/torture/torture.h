/* The torture programs' second instrumented unit (torture_more.c) and the plugin's entry point. */
#ifndef SAMPLER_TORTURE_H
#define SAMPLER_TORTURE_H

/* torture_fault.c (built without sanitizers): a write through a null pointer the compiler cannot see coming. */
void torture_fault(void);
/* torture_fault.c: recursion without end, a kilobyte per frame, until the calling thread's stack runs out. */
int torture_overflow(int depth);

/* torture_more.c: a second unit, whose report lines are long (wide tuples), in the same executable. */
void torture_more_work(long n);

/* torture_plugin.c: the instrumented plugin that torture-host dlopen()s. */
typedef long (*torture_plugin_work_function)(long n);

#endif
