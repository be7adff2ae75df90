// sampler-symbols-convert: the commands of sampler-symbols that read DWARF, which sampler-symbols
// runs in its place (main.cpp says why they are two executables):
//
//   sampler-symbols gsym app libplugin.so -o symbols/      # symbols/BUILDID.gsym for each file
//   sampler-symbols push --url URL --api-key KEY app       # upload to a collector (the symbfile upload API)
//
// The work is in symbols/dwarf_to_gsym.h (DWARF through LLVM's DebugInfo, GSYM as the GSYM format lays it out); this is
// options, one library call per file, exit status. Each file written is read back and checked before the next.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "collector/symbols_api.h"
#include "launcher/http_client.h"
#include "sections/gsym.h"
#include "symbols/dwarf_to_gsym.h"
#include "tool.h"
#include "usage.h"

namespace {

using sampler::symbols_tool::kUsage;

// The file being read, for the message when LLVM gives up on it.
std::string g_current_file;

// LLVM stops the process on errors it cannot return (an allocation that fails, "LLVM ERROR: ..." and abort()): a
// diagnostic naming the file and exit status 1 instead, as for any file the tool cannot read. No allocation here
// (the handler may run with the heap exhausted): the pieces go out through a buffer on the stack, control
// characters as '?'.
void llvm_gave_up(const char* reason) {
  char line[1024];
  size_t used = 0;
  auto add = [&](const char* text) {
    for (; *text != '\0' && used < sizeof line - 1; ++text) {
      unsigned char c = static_cast<unsigned char>(*text);
      line[used++] = c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
    }
  };
  add("sampler-symbols: '");
  add(g_current_file.c_str());
  add("': error: LLVM: ");
  add(reason);
  line[used++] = '\n';
  if (write(STDERR_FILENO, line, used) < 0) {
  }
  _exit(1);
}


/// One file to upload: its kind (the API path's end), build ID (raw bytes) and bytes.
struct Upload {
  std::string kind, build_id, bytes, name;
};

/// The uploads of one operand: an ELF file's three symbol files, or a file `gsym` wrote.
bool uploads_of(const std::string& path, const sampler::symbols::ConvertOptions& options,
                std::vector<Upload>& out, sampler::DiagnosticSink& sink) {
  using namespace sampler;
  g_current_file = path;
  const std::string base = std::filesystem::path(path).filename().string();
  for (std::string_view suffix : {".gsym", ".ranges.symbfile", ".returnpads.symbfile"}) {
    if (!base.ends_with(suffix)) continue;
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) {
      sink.error(path, 0, "cannot read the file");
      return false;
    }
    std::string bytes = text.str(), build_id;
    if (suffix == ".gsym") {
      gsym::Error problem;
      auto reader = gsym::Reader::open(bytes, problem);
      if (!reader || reader->uuid().empty()) {
        sink.error(path, 0, reader ? "the GSYM file has no UUID (build ID)" : "byte " +
                                         std::to_string(problem.offset) + ": " + problem.message);
        return false;
      }
      build_id = std::string(reader->uuid());
    } else {
      // BUILDID.ranges.symbfile: the build ID is the name (a symbfile does not hold it).
      const std::string digits = base.substr(0, base.size() - suffix.size());
      for (size_t i = 0; i + 1 < digits.size() && digits.size() % 2 == 0; i += 2) {
        build_id += static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16));
      }
      if (build_id.empty() || digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
        sink.error(path, 0, "a symbfile is pushed by the name 'gsym --symbfile' gave it: BUILDID" +
                                std::string(suffix));
        return false;
      }
    }
    std::string kind(suffix.substr(1, suffix.find('.', 1) == std::string_view::npos ? std::string_view::npos
                                                                                    : suffix.find('.', 1) - 1));
    out.push_back({kind, build_id, std::move(bytes), path});
    return true;
  }
  symbols::ConvertOptions with_symbfiles = options;
  with_symbfiles.symbfile = true;
  symbols::SymbolFiles files;
  if (!symbols::make_symbol_files(path, with_symbfiles, files, sink)) return false;
  out.push_back({"gsym", files.build_id, std::move(files.gsym), path + " (GSYM)"});
  out.push_back({"ranges", files.build_id, std::move(files.ranges), path + " (ranges)"});
  out.push_back({"returnpads", files.build_id, std::move(files.returnpads), path + " (return pads)"});
  return true;
}

/// The message of a collector's JSON failure answer, or the answer itself.
std::string answer_message(const std::string& answer) {
  const std::string_view key = "\"Text\": \"";
  const size_t at = answer.find(key);
  if (at == std::string::npos) return answer;
  const size_t begin = at + key.size();
  size_t end = begin;
  while (end < answer.size() && answer[end] != '"') end += answer[end] == '\\' ? 2 : 1;
  return answer.substr(begin, end - begin);
}

/// sampler-symbols push: every file in parts; returns the exit status.
int push(const sampler::tool::CommandLine& command, const sampler::symbols::ConvertOptions& options,
         sampler::tool::StderrSink& sink) {
  using namespace sampler;
  const std::optional<std::string> url = command.value("url");
  std::optional<std::string> key = command.value("api-key");
  if (!key) {
    if (const char* env = std::getenv("SAMPLER_API_KEY"); env != nullptr && *env != '\0') key = env;
  }
  if (!url) return tool::usage_error(kUsage, "push needs --url URL");
  if (!key) return tool::usage_error(kUsage, "push needs --api-key KEY (or SAMPLER_API_KEY)");
  if (command.operands.size() == 1) return tool::usage_error(kUsage, "no FILE given");
  size_t part_size = 1u << 20;
  if (auto text = command.value("part-size")) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text->c_str(), &end, 10);
    if (text->empty() || *end != '\0' || value == 0 || value > (1ull << 32)) {
      return tool::usage_error(kUsage, "--part-size needs a number of bytes from 1 to 4294967296");
    }
    part_size = static_cast<size_t>(value);
  }
  for (size_t i = 1; i < command.operands.size(); ++i) {
    std::vector<Upload> uploads;
    if (!uploads_of(command.operands[i], options, uploads, sink)) continue;
    for (const Upload& upload : uploads) {
      const size_t parts = std::max<size_t>(1, (upload.bytes.size() + part_size - 1) / part_size);
      const std::string endpoint = launcher::api_endpoint(*url, "/api/symbols-" + upload.kind);
      for (size_t part = 0; part < parts; ++part) {
        long status = 0;
        std::string answer;
        const std::string_view body = std::string_view(upload.bytes).substr(part * part_size, part_size);
        const bool answered = launcher::http_post(
            endpoint,
            {"Authorization: APIKey " + *key, "Content-Type: application/octet-stream",
             "FileID: " + collector::encode_file_id(upload.build_id), "FilePart: " + std::to_string(part),
             "FileParts: " + std::to_string(parts)},
            body, 120000, status, answer);
        if (answered && status == 200 && part + 1 == parts && command.has("verbose")) {
          std::printf("%s: %s\n", escape_control_characters(upload.name).c_str(),
                      escape_control_characters(answer).c_str());
        }
        if (!answered || status != 200) {
          sink.error(upload.name, 0,
                     (answered ? "the collector answered " + std::to_string(status) + ": " + answer_message(answer)
                               : "cannot reach " + endpoint + ": " + answer) +
                         (parts > 1 ? " (part " + std::to_string(part + 1) + " of " + std::to_string(parts) + ")"
                                    : ""));
          break;
        }
      }
    }
  }
  return sink.errors() > 0 ? tool::kExitDataError : tool::kExitSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sampler;
  symbols::on_llvm_fatal_error(llvm_gave_up);
  tool::CommandLine command = tool::parse_command_line(kUsage, argc, argv);
  if (command.exit_status) return *command.exit_status;
  if (command.operands.empty()) return tool::usage_error(kUsage, "missing the command (gsym)");
  symbols::ConvertOptions options;
  if (auto dir = command.value("debug-dir")) options.debug_dirs = {*dir};
  if (command.operands.front() == "push") {
    tool::StderrSink sink(kUsage.program);
    return push(command, options, sink);
  }
  if (command.operands.front() != "gsym") {
    return tool::usage_error(kUsage,
                             "unknown command '" + command.operands.front() + "' (known here: gsym, push)");
  }
  if (command.operands.size() == 1) return tool::usage_error(kUsage, "no FILE given");
  const std::string out_dir = command.value("output").value_or(".");
  // An output directory that does not exist yet is made, as `mkdir -p` would (objcopy's and gcc's users expect it).
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (!std::filesystem::is_directory(out_dir, error)) {
    return tool::usage_error(kUsage, "'" + out_dir + "' is not a directory" +
                                         (error ? " (" + error.message() + ")" : std::string()));
  }
  options.symbfile = command.has("symbfile");

  tool::StderrSink sink(kUsage.program);
  for (size_t i = 1; i < command.operands.size(); ++i) {
    g_current_file = command.operands[i];
    const std::string written = symbols::convert_to_gsym(command.operands[i], out_dir, options, sink);
    if (written.empty()) continue;
    // Read back what was written: a writer bug shows here, not in a crash report months later.
    gsym::Error problem;
    auto file = gsym::MappedFile::open(written, problem);
    if (!file || !file->reader().verify(problem)) {
      sink.error(written, 0, "byte " + std::to_string(problem.offset) + ": " + problem.message);
    }
  }
  return sink.errors() > 0 ? tool::kExitDataError : tool::kExitSuccess;
}
