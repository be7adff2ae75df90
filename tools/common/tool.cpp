// Shared command-line handling for the sampler tools (see tool.h).
#include "tool.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace sampler::tool {
namespace {

const Option* find_long(const Usage& usage, std::string_view name) {
  for (const Option& option : usage.options)
    if (name == option.long_name) return &option;
  return nullptr;
}

const Option* find_short(const Usage& usage, char name) {
  for (const Option& option : usage.options)
    if (option.short_name != 0 && option.short_name == name) return &option;
  return nullptr;
}

void print_help(const Usage& usage) {
  std::string text = "Usage: ";
  text += usage.program;
  text += ' ';
  text += usage.synopsis;
  text += "\n";
  text += usage.summary;
  text += "\n\nOptions:\n";
  auto add_row = [&text](std::string left, const char* help) {
    text += "  ";
    text += left;
    text += left.size() < 24 ? std::string(24 - left.size(), ' ') : std::string("\n" + std::string(26, ' '));
    text += help;
    text += '\n';
  };
  for (const Option& option : usage.options) {
    std::string left;
    if (option.short_name != 0) {
      left += '-';
      left += option.short_name;
      left += ", ";
    }
    left += "--";
    left += option.long_name;
    if (option.argument != nullptr) {
      left += '=';
      left += option.argument;
    }
    add_row(left, option.help);
  }
  add_row("--help", "print this help and exit");
  add_row("--version", "print the version and exit");
  if (usage.details != nullptr) {
    text += '\n';
    text += usage.details;
    if (text.back() != '\n') text += '\n';
  }
  text += "\nExit status: 0 success, 1 the data is wrong or missing, 2 usage error.\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

std::optional<std::string> CommandLine::value(std::string_view long_name) const {
  for (auto it = given_.rbegin(); it != given_.rend(); ++it)
    if (it->first == long_name) return it->second;
  return std::nullopt;
}

std::vector<std::string> CommandLine::values(std::string_view long_name) const {
  std::vector<std::string> found;
  for (const auto& [name, value] : given_)
    if (name == long_name) found.push_back(value);
  return found;
}

bool CommandLine::has(std::string_view long_name) const { return value(long_name).has_value(); }

CommandLine parse_command_line(const Usage& usage, int argc, char** argv) {
  CommandLine result;
  bool options_ended = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view argument = argv[i];
    if (options_ended || argument.size() < 2 || argument[0] != '-') {
      result.operands.emplace_back(argument);
      continue;
    }
    if (argument == "--") {
      options_ended = true;
      continue;
    }
    const Option* option = nullptr;
    std::optional<std::string> inline_value;
    std::string shown;  // the option as the user wrote it, for messages
    if (argument.starts_with("--")) {
      std::string_view name = argument.substr(2);
      size_t equals = name.find('=');
      if (equals != std::string_view::npos) {
        inline_value = std::string(name.substr(equals + 1));
        name = name.substr(0, equals);
      }
      shown = "--" + std::string(name);
      if (name == "help" && !inline_value) {
        print_help(usage);
        result.exit_status = kExitSuccess;
        return result;
      }
      if (name == "version" && !inline_value) {
        std::printf("%s (sampler) %s\n", usage.program, SAMPLER_VERSION);
        std::fflush(stdout);
        result.exit_status = kExitSuccess;
        return result;
      }
      option = find_long(usage, name);
    } else {
      shown = std::string(argument.substr(0, 2));
      option = find_short(usage, argument[1]);
      if (argument.size() > 2) inline_value = std::string(argument.substr(2));
    }
    if (option == nullptr) {
      result.exit_status = usage_error(usage, "unrecognized option '" + std::string(argument) + "'");
      return result;
    }
    std::string value;
    if (option->argument == nullptr) {
      if (inline_value) {
        result.exit_status = usage_error(usage, "option '" + shown + "' takes no argument");
        return result;
      }
    } else if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      result.exit_status = usage_error(usage, "option '" + shown + "' requires an argument");
      return result;
    }
    result.given_.emplace_back(option->long_name, std::move(value));
  }
  return result;
}

std::vector<char*> join_option_value(int argc, char** argv, std::string_view name, std::string& storage) {
  std::vector<char*> result(argv, argv + argc);
  std::string flag = "--" + std::string(name);
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string_view(argv[i]) == "--") break;
    if (argv[i] == flag && argv[i + 1][0] != '-') {
      storage = flag + "=" + argv[i + 1];
      result.erase(result.begin() + i + 1);
      result[static_cast<size_t>(i)] = storage.data();
      break;
    }
  }
  result.push_back(nullptr);
  return result;
}

int usage_error(const Usage& usage, std::string_view message) {
  // The message may quote an argument: its control characters are shown escaped, as in every diagnostic.
  const std::string shown = escape_control_characters(message);
  std::fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", usage.program, shown.c_str(), usage.program);
  return kExitUsage;
}

void StderrSink::report(const Diagnostic& diagnostic) {
  (diagnostic.severity == Severity::kError ? errors_ : warnings_)++;
  std::string line = format_diagnostic(program_, diagnostic);
  line += '\n';
  if (flush_first_ != nullptr) {
    flush_first_->flush();
  } else {
    std::fflush(stdout);
  }
  if (progress_ != nullptr) progress_->clear();
  // One write per diagnostic so that lines from parallel tools do not interleave mid-line.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

Output::Output(int fd, size_t buffer_size) : fd_(fd), buffer_(buffer_size) {}

Output::~Output() { flush(); }

void Output::write(std::string_view text) {
  if (text.size() >= buffer_.size() / 2) {
    flush();
    write_through(text);
    return;
  }
  if (used_ + text.size() > buffer_.size()) flush();
  std::memcpy(buffer_.data() + used_, text.data(), text.size());
  used_ += text.size();
}

void Output::write(char c) {
  if (used_ == buffer_.size()) flush();
  buffer_[used_++] = c;
}

bool Output::flush() {
  write_through(std::string_view(buffer_.data(), used_));
  used_ = 0;
  return !failed_;
}

void Output::write_through(std::string_view text) {
  while (!text.empty() && !failed_) {
    ssize_t written = ::write(fd_, text.data(), text.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      failed_ = true;
      error_number_ = errno;
      return;
    }
    text.remove_prefix(static_cast<size_t>(written));
  }
}

bool finish_output(Output& output, DiagnosticSink& sink) {
  if (output.flush()) return true;
  sink.error("", 0, std::string("cannot write standard output: ") + std::strerror(output.error_number()));
  return false;
}

}  // namespace sampler::tool
