// The shared command-line handling every tool uses: option forms, operands, usage errors.
#include "tool.h"

#include <gtest/gtest.h>

#include <csignal>
#include <unistd.h>

#include <array>
#include <string>
#include <vector>

namespace sampler::tool {
namespace {

constexpr std::array kOptions = {
    Option{"require", 0, nullptr, "fail when missing"},
    Option{"section", 's', "NAME", "section name"},
};
const Usage kUsage{"demo", "[OPTION]... FILE...", "Demonstrates.", kOptions, nullptr};

CommandLine parse(std::vector<std::string> words) {
  std::vector<char*> argv;
  static std::string program = "demo";
  argv.push_back(program.data());
  for (std::string& word : words) argv.push_back(word.data());
  return parse_command_line(kUsage, static_cast<int>(argv.size()), argv.data());
}

TEST(ParseCommandLine, FlagsValuesAndOperandsInOrder) {
  CommandLine line = parse({"a", "--require", "--section=.x", "b", "-s", ".y", "--", "--c"});
  ASSERT_FALSE(line.exit_status);
  EXPECT_TRUE(line.has("require"));
  EXPECT_EQ(line.value("section"), ".y");  // the last occurrence wins
  EXPECT_EQ(line.operands, (std::vector<std::string>{"a", "b", "--c"}));
}

TEST(ParseCommandLine, ShortOptionWithAttachedValue) {
  EXPECT_EQ(parse({"-s.z"}).value("section"), ".z");
}

TEST(ParseCommandLine, LoneDashIsAnOperand) {
  EXPECT_EQ(parse({"-"}).operands, std::vector<std::string>{"-"});
}

TEST(ParseCommandLine, UsageErrorsExitTwo) {
  EXPECT_EQ(parse({"--bogus"}).exit_status, kExitUsage);
  EXPECT_EQ(parse({"--section"}).exit_status, kExitUsage);
  EXPECT_EQ(parse({"--require=yes"}).exit_status, kExitUsage);
  EXPECT_EQ(parse({"-q"}).exit_status, kExitUsage);
}

TEST(Output, WritesSmallAndLargeSpansInOrder) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  {
    Output output(fds[1], 16);
    output.write("ab");
    output.write(std::string(20, 'x'));  // larger than half the buffer: written through
    output.write('c');
    EXPECT_TRUE(output.flush());
  }
  close(fds[1]);
  char buffer[64];
  ssize_t n = read(fds[0], buffer, sizeof buffer);
  close(fds[0]);
  EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0), "ab" + std::string(20, 'x') + "c");
}

TEST(Output, ReportsWriteFailure) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  signal(SIGPIPE, SIG_IGN);
  Output output(fds[1], 16);
  output.write("hello");
  DiagnosticList sink;
  EXPECT_FALSE(finish_output(output, sink));
  ASSERT_EQ(sink.items.size(), 1u);
  EXPECT_NE(sink.items[0].message.find("cannot write standard output"), std::string::npos);
  close(fds[1]);
}

}  // namespace
}  // namespace sampler::tool
