// analysis/command_line.h: sampler-analyze's --sites FILE... REPORT-OR-DIR..., one case per row.
#include "analysis/command_line.h"

#include <gtest/gtest.h>

namespace sampler::analysis {
namespace {

struct Case {
  std::vector<std::string> args;
  std::vector<std::string> sites;
  std::vector<std::string> rest;
};

// Site information, for these cases: names ending in ".sites" or starting with "elf".
bool fake_sites(const std::string& path) { return path.ends_with(".sites") || path.starts_with("elf"); }

TEST(CommandLine, SitesArguments) {
  const Case cases[] = {
      // An option after the group ends it: every argument before it is site information.
      {{"--sites", "app", "lib.so", "--html", "out", "reports"}, {"app", "lib.so"}, {"--html", "out", "reports"}},
      // Only operands after it: the first, then those that are site information, leaving one report.
      {{"--sites", "app.sites", "reports"}, {"app.sites"}, {"reports"}},
      {{"--sites", "elf1", "b.sites", "reports", "more"}, {"elf1", "b.sites"}, {"reports", "more"}},
      {{"--sites", "a.sites", "b.sites"}, {"a.sites"}, {"b.sites"}},
      {{"--sites", "dir", "elf2", "reports"}, {"dir", "elf2"}, {"reports"}},
      {{"--sites", "elf1", "dir", "elf2", "reports"}, {"elf1"}, {"dir", "elf2", "reports"}},
      // "--" ends the group and the options; -s and --sites= are the same option.
      {{"-s", "dir", "other", "--", "--sites", "r"}, {"dir", "other"}, {"--", "--sites", "r"}},
      {{"--sites=x", "--sites=y", "r"}, {"x", "y"}, {"r"}},
      // "-" (standard input) is an argument, not an option.
      {{"--sites", "a", "-", "-j", "2", "r"}, {"a", "-"}, {"-j", "2", "r"}},
      // No argument: left for the option parser to report.
      {{"r", "--sites"}, {}, {"r", "--sites"}},
      {{"--sites", "--top", "1", "r"}, {}, {"--sites", "--top", "1", "r"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> rest;
    EXPECT_EQ(take_sites_arguments(c.args, rest, fake_sites), c.sites) << c.args.size() << " " << c.args[0];
    EXPECT_EQ(rest, c.rest) << c.args.size() << " " << c.args[0];
  }
}

}  // namespace
}  // namespace sampler::analysis
