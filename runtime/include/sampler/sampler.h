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

#endif /* SAMPLER_SAMPLER_H */
