// sampler-analyze's one command-line rule that the shared option parser (tools/common/tool.h) has no notion of:
// sampler-analyze's `--sites FILE... REPORT-OR-DIR...`, an option with several arguments.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace sampler::analysis {

/// True for what can only be site information: a *.sites file, an ELF file or an ar archive (told by magic).
bool is_site_information_file(const std::string& path);

/// Takes every --sites group out of `args` (argv without the program name) and returns their arguments; the
/// other arguments go to `rest`, in order. A group is `--sites` (or `-s`) and every argument after it up to the
/// next option or "--"; `--sites=FILE` is one. A group that nothing but operands follows is ambiguous: its first
/// argument is site information, and so is each next one while `is_sites(argument)` holds, leaving at least one
/// operand; the first other argument begins the reports. A `--sites` without any argument is left in `rest`
/// (the option parser then says it needs one). Everything after "--" goes to `rest`.
std::vector<std::string> take_sites_arguments(const std::vector<std::string>& args, std::vector<std::string>& rest,
                                              const std::function<bool(const std::string&)>& is_sites);

}  // namespace sampler::analysis
