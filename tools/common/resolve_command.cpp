// The command line shared by resolveSamples and resolveTimestamps (see resolve_command.h). The work is in
// sections/resolve.h; this is options, one library call, exit status.
#include "resolve_command.h"

#include <string>
#include <vector>

#include "sections/line_reader.h"
#include "sections/resolve.h"

namespace sampler::tool {

int run_resolve(const Usage& usage, SampleSectionKind kind, int argc, char** argv) {
  CommandLine command = parse_command_line(usage, argc, argv);
  if (command.exit_status) return *command.exit_status;

  std::vector<std::string> files = command.operands;
  std::string section = command.value("section").value_or(std::string(kDefaultSitesSection));
  // docs/tools.md: the section may also be the first argument, when it begins with "." and has no "/".
  if (!command.has("section") && !files.empty() && files.front().starts_with(".") &&
      files.front().find('/') == std::string::npos) {
    section = files.front();
    files.erase(files.begin());
  }
  if (section.empty()) return usage_error(usage, "the section name is empty");
  if (files.empty()) return usage_error(usage, "no FILE given (the files that hold the sites)");

  Output output;
  StderrSink sink(usage.program, &output);
  SitesIndex sites(section);
  for (const std::string& file : files) sites.add_path(file, sink);

  LineReader input(0, "<stdin>", sink);
  ResolveOptions options;
  options.kind = kind;
  options.merge = !command.has("no-merge");
  resolve_samples(input, sites, options, [&output](std::string_view text) { output.write(text); }, sink);
  bool written = finish_output(output, sink);
  return written && sink.errors() == 0 ? kExitSuccess : kExitDataError;
}

}  // namespace sampler::tool
