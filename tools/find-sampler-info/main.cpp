// find-sampler-info: saves the static site information of every instrumented ELF file in an RPM build root as
// BUILDROOT/usr/lib/sampler/sites/<path>.sites, for a *-samplerinfo package (the sampler manual, "Embedding and
// Extraction"). rpm's %install-time macros run it (rpm/macros.sampler); it never modifies an ELF file.
#include <array>
#include <cstdio>
#include <string>

#include "packaging/find_sampler_info.h"
#include "tool.h"

using namespace sampler;

namespace {

constexpr std::array kOptions = {
    tool::Option{"base-dir", 'b', "DIR", "build directory prefix to rewrite in the site file names"},
    tool::Option{"dest-dir", 'd', "DIR", "what replaces it (empty: names relative to DIR)"},
    tool::Option{"section", 0, "NAME", "ELF section to save (default .debug_site_info)"},
    tool::Option{"sites-dir", 0, "DIR", "where to write, relative to BUILDROOT (default usr/lib/sampler/sites)"},
    tool::Option{"dry-run", 'n', nullptr, "write nothing; list the files that carry site information"},
    tool::Option{"verbose", 'v', nullptr, "list each file found and the .sites file written"},
};

constexpr tool::Usage kUsage = {
    "find-sampler-info",
    "[OPTIONS] BUILDROOT",
    "Save the site information of every ELF file or archive under BUILDROOT as a .sites file.",
    kOptions,
    "For BUILDROOT/PATH carrying a non-empty .debug_site_info section, writes\n"
    "BUILDROOT/usr/lib/sampler/sites/PATH.sites with what 'extract-section .debug_site_info' prints for it.\n"
    "With --base-dir and --dest-dir, the file field (first field) of each site line that starts with\n"
    "the base directory (whole path components) has that prefix replaced; nothing else changes.\n"
    "Symbolic links are not followed; usr/lib/debug and the sites directory are not searched.\n"
    "ELF files are only read: rpm's stripping removes the section from the packaged binaries.\n"
    "--dry-run and --verbose print one line per file found: PATH, or PATH<TAB>SITES-FILE (relative).",
};

}  // namespace

int main(int argc, char** argv) {
  tool::CommandLine command_line = tool::parse_command_line(kUsage, argc, argv);
  if (command_line.exit_status) return *command_line.exit_status;
  if (command_line.operands.size() != 1) return tool::usage_error(kUsage, "expected one BUILDROOT");

  packaging::FindOptions options;
  options.build_root = command_line.operands[0];
  options.dry_run = command_line.has("dry-run");
  if (auto section = command_line.value("section")) options.section_name = *section;
  if (auto sites_dir = command_line.value("sites-dir")) options.sites_dir = *sites_dir;
  if (options.section_name.empty()) return tool::usage_error(kUsage, "--section must not be empty");
  if (options.sites_dir.empty() || options.sites_dir.front() == '/')
    return tool::usage_error(kUsage, "--sites-dir must be a relative path");
  auto base = command_line.value("base-dir");
  auto dest = command_line.value("dest-dir");
  if (base.has_value() != dest.has_value())
    return tool::usage_error(kUsage, "--base-dir and --dest-dir go together");
  if (base) {
    options.rewrite = packaging::PrefixRewrite::make(*base, *dest);
    if (!options.rewrite)
      return tool::usage_error(kUsage, "--base-dir must not be empty, and neither directory may hold a tab or newline");
  }

  const bool list = options.dry_run || command_line.has("verbose");
  tool::StderrSink sink(kUsage.program);
  tool::Output output;
  bool ok = packaging::find_sampler_info(options, [&](const packaging::FoundSites& found) {
    if (!list) return;
    output.write(found.elf);
    if (!options.dry_run) {
      output.write('\t');
      output.write(found.sites);
    }
    output.write('\n');
  }, sink);
  ok &= tool::finish_output(output, sink);
  return ok ? tool::kExitSuccess : tool::kExitDataError;
}
