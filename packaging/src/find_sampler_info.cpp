// find-sampler-info's logic (see packaging/find_sampler_info.h): walking a build root, extracting, rewriting, writing.
#include "packaging/find_sampler_info.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <system_error>
#include <unistd.h>
#include <vector>

#include "sections/elf_section.h"
#include "sections/input_files.h"
#include "sections/site_info.h"

namespace sampler::packaging {
namespace fs = std::filesystem;
namespace {

std::string_view strip_trailing_slashes(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return path;
}

bool has_line_breaking_char(std::string_view text) {
  return text.find_first_of("\t\n\r") != std::string_view::npos;
}

// Site lines end in "\n" (parse_site_info guarantees it for a body); the file field ends at the first tab.
void append_rewritten_body(std::string_view body, const PrefixRewrite& rewrite, std::string& out, size_t& count) {
  while (!body.empty()) {
    size_t end = body.find('\n');
    std::string_view line = body.substr(0, end == std::string_view::npos ? body.size() : end + 1);
    body.remove_prefix(line.size());
    size_t tab = line.find('\t');
    // A line without a tab has only the file field; keep its "\r\n" or "\n" out of the name.
    size_t field_end = tab != std::string_view::npos ? tab : line.find_first_of("\r\n");
    if (field_end == std::string_view::npos) field_end = line.size();
    if (std::optional<std::string> renamed = rewrite.apply(line.substr(0, field_end))) {
      out += *renamed;
      out += line.substr(field_end);
      ++count;
    } else {
      out += line;
    }
  }
}

// Reads up to `size` bytes from the start of `path`; false if it cannot be opened.
bool read_head(const std::string& path, char* buffer, size_t size, size_t& got, int& error) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) {
    error = errno;
    return false;
  }
  got = 0;
  while (got < size) {
    ssize_t n = ::read(fd.get(), buffer + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  return true;
}

// Writes `text` to `path` through a temporary name and a rename, so that a failed run never leaves half a file.
bool write_file(const fs::path& path, std::string_view text, DiagnosticSink& sink) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    sink.error(path.parent_path().string(), 0, "cannot create directory: " + ec.message());
    return false;
  }
  std::string temporary = path.string() + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    sink.error(temporary, 0, std::string("cannot create: ") + std::strerror(errno));
    return false;
  }
  int error = 0;
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    sink.error(path.string(), 0, std::string("cannot write: ") + std::strerror(error));
    return false;
  }
  return true;
}

// Forwards diagnostics, except that an archive member which is not ELF is skipped rather than an error: it
// cannot carry an ELF section (LLVM bitcode in a static library built with -flto, the members of a .deb), and a
// build root may well hold such archives. The ELF reader gives that problem its own code.
class SkipNonElfMembers : public DiagnosticSink {
 public:
  explicit SkipNonElfMembers(DiagnosticSink& next) : next_(next) {}
  void report(const Diagnostic& diagnostic) override {
    if (diagnostic.code == DiagnosticCode::kArchiveMemberNotElf) return;
    if (diagnostic.severity == Severity::kError) ++errors_;
    next_.report(diagnostic);
  }
  size_t errors() const { return errors_; }

 private:
  DiagnosticSink& next_;
  size_t errors_ = 0;
};

}  // namespace

std::optional<PrefixRewrite> PrefixRewrite::make(std::string_view base_dir, std::string_view dest_dir) {
  if (base_dir.empty() || has_line_breaking_char(base_dir) || has_line_breaking_char(dest_dir)) return std::nullopt;
  PrefixRewrite rewrite;
  rewrite.base_ = strip_trailing_slashes(base_dir);
  rewrite.dest_ = strip_trailing_slashes(dest_dir);
  rewrite.relative_ = dest_dir.empty();
  return rewrite;
}

std::optional<std::string> PrefixRewrite::apply(std::string_view file) const {
  // Whole components only: the prefix must be followed by '/' or end the name. A base of "/" (stored as "")
  // therefore matches every absolute name.
  if (!file.starts_with(base_)) return std::nullopt;
  std::string_view rest = file.substr(base_.size());
  if (!rest.empty() && rest.front() != '/') return std::nullopt;
  if (rest.empty() && base_.empty()) return std::nullopt;  // "" is not a path under "/"
  if (relative_) {
    if (!rest.empty()) rest.remove_prefix(1);
    return rest.empty() ? std::string(".") : std::string(rest);
  }
  return dest_ + std::string(rest);
}

std::string rewrite_site_files(std::string_view text, std::string_view source_name, const PrefixRewrite* rewrite,
                               DiagnosticSink& sink, size_t* rewritten_lines) {
  std::string out;
  size_t count = 0;
  if (rewrite != nullptr) out.reserve(text.size() + text.size() / 8);
  size_t copied = 0;  // bytes of text already accounted for in out
  parse_site_info(text, source_name, [&](const SitesSection& section) {
    if (rewrite == nullptr) return;
    // The body is a view into text (site_info.h); anything else would be a library bug, so leave it alone.
    const char* const end = text.data() + text.size();
    if (section.body.data() < text.data() + copied || section.body.data() + section.body.size() > end) return;
    size_t begin = static_cast<size_t>(section.body.data() - text.data());
    out.append(text.substr(copied, begin - copied));
    append_rewritten_body(section.body, *rewrite, out, count);
    copied = begin + section.body.size();
  }, sink);
  if (rewritten_lines != nullptr) *rewritten_lines = count;
  if (rewrite == nullptr) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

bool find_sampler_info(const FindOptions& options, const std::function<void(const FoundSites&)>& on_found,
                       DiagnosticSink& sink) {
  bool ok = true;
  const fs::path root(options.build_root);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    sink.error(options.build_root, 0, ec ? "cannot read directory: " + ec.message() : "not a directory");
    return false;
  }
  const fs::path sites_dir = fs::path(options.sites_dir).lexically_normal();
  // Symbolic links are not followed; the sites directory itself and find-debuginfo's separate debug files (which
  // carry the section legitimately) are not searched.
  const std::vector<fs::path> skip = {sites_dir, fs::path("usr/lib/debug")};
  DirectoryWalk walk;
  walk.follow_file_links = false;
  walk.skip_directory = [&skip](const std::string& relative) {
    return std::find(skip.begin(), skip.end(), fs::path(relative)) != skip.end();
  };
  std::vector<std::string> files;
  if (!walk_directory(options.build_root, walk, files, sink)) ok = false;

  for (const std::string& relative : files) {
    const std::string path = (root / relative).string();
    char head[8];
    size_t got = 0;
    int error = 0;
    if (!read_head(path, head, sizeof head, got, error)) {
      sink.error(path, 0, std::string("cannot open: ") + std::strerror(error));
      ok = false;
      continue;
    }
    if (!looks_like_elf_or_archive(std::string_view(head, got))) continue;

    std::string text;
    SkipNonElfMembers elf_sink(sink);
    for_each_elf_section(path, options.section_name, [&](const ElfSection& section) {
      if (section.status != ElfSection::Status::kFound) return;
      // The same normalisation as extract-section: NUL padding between linked units removed.
      for_each_non_nul_span(section.bytes, [&](std::string_view span) { text.append(span); });
    }, elf_sink);
    if (elf_sink.errors() != 0) ok = false;
    if (text.empty()) continue;

    FoundSites found;
    found.elf = relative;
    found.sites = (sites_dir / (relative + ".sites")).string();
    DiagnosticList problems;  // forwarded to sink; counted to decide the exit status
    std::string sites = rewrite_site_files(text, path, options.rewrite ? &*options.rewrite : nullptr, problems,
                                           &found.rewritten_lines);
    for (const Diagnostic& diagnostic : problems.items) sink.report(diagnostic);
    if (problems.error_count() != 0) ok = false;
    found.bytes = sites.size();
    if (!options.dry_run && !write_file(root / found.sites, sites, sink)) {
      ok = false;
      continue;
    }
    on_found(found);
  }
  return ok;
}

}  // namespace sampler::packaging
