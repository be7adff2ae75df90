// The `plan` subreport (docs/formats.md section 3), from the crash path too: no allocation, no libc call.
#include "plan.h"

namespace sampler::runtime {

PlanIdentity g_plan_identity;

void write_plan_subreport(ReportWriter& out) {
  if (!g_plan_identity.in_force) return;
  out.append("<report id=\"plan\">");
  out.end_line();
  out.append("id\t");
  out.append(g_plan_identity.id);
  out.end_line();
  out.append("sparsity\t");
  out.append(g_plan_identity.sparsity);
  out.end_line();
  out.append("</report>");
  out.end_line();
}

}  // namespace sampler::runtime
