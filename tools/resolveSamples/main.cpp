// resolveSamples: joins the samples sections of a report with their static sites (SPEC section 5; seed 004,
// "samples subreport").
//
//   extract-report samples < report | resolveSamples app libplugin.so /usr/lib/sampler/sites
//
// One tab-separated line per site: FILE, unit, scheme, static fields, counters. The work is in
// sections/resolve.h; this is options, one library call, exit status.
#include <array>

#include "sections/resolve.h"
#include "tool.h"

namespace {

constexpr std::array kOptions = {
    sampler::tool::Option{"section", 0, "NAME", "read sites from ELF section NAME (default .debug_site_info)"},
    sampler::tool::Option{"no-merge", 0, nullptr, "print repeated sections separately instead of merging them"},
};

constexpr sampler::tool::Usage kUsage = {
    "resolveSamples",
    "[SECTION] FILE...",
    "Join the samples sections read on standard input with the sites of the same unit and scheme in FILE...",
    kOptions,
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
  using namespace sampler;
  tool::CommandLine command = tool::parse_command_line(kUsage, argc, argv);
  if (command.exit_status) return *command.exit_status;

  std::vector<std::string> files = command.operands;
  std::string section = command.value("section").value_or(std::string(kDefaultSitesSection));
  // SPEC section 5: the section may also be the first argument, when it begins with "." and has no "/".
  if (!command.has("section") && !files.empty() && files.front().starts_with(".") &&
      files.front().find('/') == std::string::npos) {
    section = files.front();
    files.erase(files.begin());
  }
  if (section.empty()) return tool::usage_error(kUsage, "the section name is empty");
  if (files.empty()) return tool::usage_error(kUsage, "no FILE given (the files that hold the sites)");

  tool::StderrSink sink(kUsage.program);
  SitesIndex sites(section);
  for (const std::string& file : files) sites.add_path(file, sink);

  tool::Output output;
  LineReader input(0, "<stdin>", sink);
  ResolveOptions options;
  options.kind = SampleSectionKind::kSamples;
  options.merge = !command.has("no-merge");
  resolve_samples(input, sites, options, [&output](std::string_view text) { output.write(text); }, sink);
  bool written = tool::finish_output(output, sink);
  return written && sink.errors() == 0 ? tool::kExitSuccess : tool::kExitDataError;
}
