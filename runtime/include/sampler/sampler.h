/* sampler runtime: the whole public C interface of libsampler in one include (docs/instrumenting.md).
 *
 *   sampler/abi.h     structures, registration, the slow path, classification and control functions
 *   sampler/record.h  the inline fast path of each scheme's recording helper
 *   sampler/unit.h    declaring a unit by hand in one table, and recording at its sites by name
 *
 * docs/instrumenting.md explains how to instrument a program by hand or from a compiler pass.
 */
#ifndef SAMPLER_SAMPLER_H
#define SAMPLER_SAMPLER_H

#include "sampler/abi.h"
#include "sampler/record.h"
#include "sampler/unit.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Writes the report so far, for programs that choose the moment themselves (a daemon after each request, a
 *  long computation at each checkpoint): everything counted until now, cumulative, as a whole report that ends
 *  with an `interim` subreport holding its sequence number (1, 2, ...). Each call replaces the previous interim
 *  report; the report at exit (or a crash) replaces the last one, so the final report holds no interim
 *  subreport and counts nothing twice. Thread-safe (the report's lock), and it returns at once, writing nothing,
 *  when the report is already finished, in a forked child, without a report destination, or when the destination
 *  is not a regular file (a pipe cannot take back what it was given). Sampling goes on meanwhile. A report file
 *  named by SAMPLER_FILE is replaced whole (written beside it as NAME.new, then renamed), so that it holds a whole
 *  report at every instant; SAMPLER_INTERVAL=SECONDS writes the same report every SECONDS without the call. */
SAMPLER_API void sampler_write_report(void);

#ifdef __cplusplus
}
#endif

#endif /* SAMPLER_SAMPLER_H */
