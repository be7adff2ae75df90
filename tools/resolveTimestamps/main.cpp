// resolveTimestamps: joins the timestamps sections of a report with their static sites (docs/tools.md).
//
//   extract-report samples < report | resolveTimestamps app | sort -n
//
// One tab-separated line per site: timestamp, FILE, unit, scheme, when (first or last), static fields. The
// work is in sections/resolve.h, the command line in tools/common/resolve_command.h.
#include "resolve_command.h"

namespace {

constexpr sampler::tool::Usage kUsage = {
    "resolveTimestamps",
    "[SECTION] FILE...",
    "Join the timestamps sections read on standard input with the sites of the same unit and scheme in FILE...",
    sampler::tool::kResolveOptions,
    "Standard input: a samples subreport (as 'extract-report samples' prints it) or a whole report, plain or\n"
    "gzip-compressed. FILE: .sites files, ELF executables, shared libraries, objects or ar archives, or\n"
    "directories searched recursively for *.sites. SECTION, when the first argument begins with '.' and has\n"
    "no '/', names the ELF section like --section.\n"
    "\n"
    "Output: one line per site, tab-separated: the timestamp, the FILE the site came from, unit, scheme, when\n"
    "(first or last), the site's static fields. Sections repeated in the input (a plugin loaded several\n"
    "times) are merged at their first appearance: the earliest non-zero 'first', the latest 'last'.\n",
};

}  // namespace

int main(int argc, char** argv) {
  return sampler::tool::run_resolve(kUsage, sampler::SampleSectionKind::kTimestamps, argc, argv);
}
