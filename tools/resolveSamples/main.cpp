// resolveSamples: joins the samples sections of a report with their static sites (docs/tools.md; the sampler manual,
// "samples subreport").
//
//   extract-report samples < report | resolveSamples app libplugin.so /usr/lib/sampler/sites
//
// One tab-separated line per site: FILE, unit, scheme, static fields, counters. The work is in
// sections/resolve.h, the command line in tools/common/resolve_command.h.
#include "resolve_command.h"

namespace {

constexpr sampler::tool::Usage kUsage = {
    "resolveSamples",
    "[SECTION] FILE...",
    "Join the samples sections read on standard input with the sites of the same unit and scheme in FILE...",
    sampler::tool::kResolveOptions,
    "Standard input: a samples subreport (as 'extract-report samples' prints it) or a whole report, plain or\n"
    "gzip-compressed. FILE: .sites files, ELF executables, shared libraries, objects or ar archives, or\n"
    "directories searched recursively for *.sites. SECTION, when the first argument begins with '.' and has\n"
    "no '/', names the ELF section like --section.\n"
    "\n"
    "Output: one line per site, tab-separated: the FILE the site came from, unit, scheme, the site's static\n"
    "fields, its counters. Sections repeated in the input (a plugin loaded several times) are merged at their\n"
    "first appearance: counters summed, bounds as the least minimum and the greatest maximum.\n",
};

}  // namespace

int main(int argc, char** argv) {
  return sampler::tool::run_resolve(kUsage, sampler::SampleSectionKind::kSamples, argc, argv);
}
