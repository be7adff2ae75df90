// sampler-symbol-dir's logic (see symbols/symbol_dir.h).
#include "symbols/symbol_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <system_error>

#include "sections/elf_debug_info.h"
#include "sections/hex.h"
#include "sections/input_files.h"

namespace sampler::symbols {
namespace fs = std::filesystem;
namespace {

/// One ELF file that could fill an entry.
struct Candidate {
  std::string path;
  ElfDebugInfo info;
  int usefulness = 0;
  bool named = false;  // given on the command line, not found in a directory
  dev_t device = 0;
  ino_t inode = 0;
};

/// True if `path` starts like an ELF file (files found in directories that are not are passed over in silence).
bool starts_like_elf(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return false;
  char magic[4];
  return ::pread(fd.get(), magic, sizeof magic, 0) == 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}

/// Reads `path`'s build ID and debug information into a candidate. Problems go to `sink` (named inputs) or are
/// dropped (files found in a directory: a tree such as /usr/lib/debug holds much else).
std::optional<Candidate> read_candidate(const std::string& path, bool named, DiagnosticSink& sink) {
  DiagnosticList quiet;
  std::optional<ElfDebugInfo> info = read_elf_debug_info(path, named ? sink : quiet);
  if (!info) {
    // A file found in a directory that starts like ELF but cannot be read is still worth a word.
    if (!named) {
      for (const Diagnostic& diagnostic : quiet.items) sink.report(diagnostic);
    }
    return std::nullopt;
  }
  if (info->build_id.size() < 2) {
    if (named) {
      sink.error(path, 0,
                 info->build_id.empty()
                     ? "no GNU build ID: a symbolizer cannot look it up (link it with -Wl,--build-id)"
                     : "a build ID of one byte: a symbolizer cannot look it up");
    }
    return std::nullopt;
  }
  Candidate candidate{path, std::move(*info), 0, named};
  candidate.usefulness = usefulness(candidate.info.has_dwarf, candidate.info.has_symbol_table);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    candidate.device = st.st_dev;
    candidate.inode = st.st_ino;
  }
  return candidate;
}

/// Copies `source` to the new file `target` (created with mode 0644, never over an existing one).
bool copy_file(const std::string& source, const std::string& target, std::string& error) {
  UniqueFd in(::open(source.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in) {
    error = "cannot open '" + source + "': " + std::strerror(errno);
    return false;
  }
  UniqueFd out(::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!out) {
    error = std::string("cannot create: ") + std::strerror(errno);
    return false;
  }
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(in.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      error = "cannot read '" + source + "': " + std::strerror(errno);
      return false;
    }
    if (got == 0) break;
    for (ssize_t done = 0; done < got;) {
      ssize_t written = ::write(out.get(), buffer + done, static_cast<size_t>(got - done));
      if (written < 0 && errno == EINTR) continue;
      if (written < 0) {
        error = std::string("cannot write: ") + std::strerror(errno);
        return false;
      }
      done += written;
    }
  }
  if (::close(out.release()) != 0) {
    error = std::string("cannot write: ") + std::strerror(errno);
    return false;
  }
  return true;
}

/// Makes `entry` the file `source`: a hard link, else a copy, under a temporary name first so that the entry is
/// never half there, then renamed over whatever was at `entry`.
bool place_entry(const std::string& source, const fs::path& entry, bool& copied, DiagnosticSink& sink) {
  std::error_code ec;
  fs::create_directories(entry.parent_path(), ec);
  if (ec) {
    sink.error(DiagnosticCode::kCannotOpen, entry.parent_path().string(), 0,
               "cannot create directory: " + ec.message());
    return false;
  }
  const std::string temporary = entry.string() + ".tmp-" + std::to_string(::getpid());
  ::unlink(temporary.c_str());
  copied = false;
  // AT_SYMLINK_FOLLOW: a source found through a symbolic link (a .build-id link of /usr/lib/debug) is linked as the
  // file it leads to, not as the link, which would not resolve from DIR.
  if (::linkat(AT_FDCWD, source.c_str(), AT_FDCWD, temporary.c_str(), AT_SYMLINK_FOLLOW) != 0) {
    // Another file system (EXDEV), a file of another user (EPERM under protected_hardlinks), too many links: copy.
    std::string error;
    if (!copy_file(source, temporary, error)) {
      ::unlink(temporary.c_str());
      sink.error(DiagnosticCode::kCannotOpen, entry.string(), 0, error);
      return false;
    }
    copied = true;
  }
  if (::rename(temporary.c_str(), entry.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    sink.error(DiagnosticCode::kCannotOpen, entry.string(), 0, std::string("cannot create: ") + std::strerror(error));
    return false;
  }
  return true;
}

}  // namespace

int usefulness(bool has_dwarf, bool has_symbol_table) { return has_dwarf ? 2 : has_symbol_table ? 1 : 0; }

bool make_symbol_dir(const SymbolDirOptions& options, const std::function<void(const SymbolEntry&)>& on_entry,
                     DiagnosticSink& sink) {
  bool ok = true;
  // Every candidate, in the order the inputs give them; then, per build ID, the best.
  std::vector<Candidate> candidates;
  for (const std::string& input : options.inputs) {
    std::optional<InputFile> file = open_input(input, AcceptedKinds{.directory = true}, sink);
    if (!file) {
      ok = false;
      continue;
    }
    if (file->kind != FileKind::kDirectory) {
      file.reset();
      if (auto candidate = read_candidate(input, true, sink)) {
        candidates.push_back(std::move(*candidate));
      } else {
        ok = false;
      }
      continue;
    }
    // A directory: its ELF files, symbolic links to files included (a tree of links to the build's binaries).
    std::vector<std::string> files;
    if (!walk_directory(input, DirectoryWalk{}, files, sink)) ok = false;
    for (const std::string& relative : files) {
      const std::string path = (fs::path(input) / relative).string();
      if (!starts_like_elf(path)) continue;
      if (auto candidate = read_candidate(path, false, sink)) candidates.push_back(std::move(*candidate));
    }
  }

  std::map<std::string, size_t> best;  // build ID (hex) -> index of the best candidate
  std::vector<std::string> order;      // build IDs in the order they were first seen
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string id = hex_bytes(candidates[i].info.build_id);
    auto [it, inserted] = best.try_emplace(id, i);
    if (inserted) {
      order.push_back(id);
    } else if (candidates[i].usefulness > candidates[it->second].usefulness) {
      it->second = i;
    }
  }

  for (const std::string& id : order) {
    const Candidate& chosen = candidates[best[id]];
    if (chosen.usefulness == 0) {
      // A fully stripped binary: its entry would give a symbolizer nothing. Said once, if the user named it.
      for (const Candidate& c : candidates) {
        if (c.named && hex_bytes(c.info.build_id) == id) {
          sink.warning(c.path, 0,
                       "no debug information and no symbol table: nothing for a symbolizer, not linked (give its "
                       "unstripped binary or separate debug file too)");
          break;
        }
      }
      continue;
    }
    SymbolEntry entry{chosen.path, build_id_entry(chosen.info.build_id), id};
    const fs::path target = fs::path(options.directory) / entry.entry;
    struct stat existing {};
    if (::stat(target.c_str(), &existing) == 0) {
      if (existing.st_dev == chosen.device && existing.st_ino == chosen.inode) continue;  // already this file
      DiagnosticList ignored;  // an entry that cannot be read is replaced
      std::optional<ElfDebugInfo> info = read_elf_debug_info(target.string(), ignored);
      if (info && hex_bytes(info->build_id) == id &&
          usefulness(info->has_dwarf, info->has_symbol_table) > chosen.usefulness) {
        continue;  // what is there is more useful: kept
      }
      entry.replaced = true;
    } else if (::lstat(target.c_str(), &existing) == 0) {
      entry.replaced = true;  // a dangling symbolic link
    }
    if (!options.dry_run && !place_entry(chosen.path, target, entry.copied, sink)) {
      ok = false;
      continue;
    }
    on_entry(entry);
  }
  return ok;
}

}  // namespace sampler::symbols
