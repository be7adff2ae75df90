// Finding and reading the sites a user names (see sections/sites_index.h; docs/tools.md, FILE arguments).
#include "sections/sites_index.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sections/elf_section.h"
#include "sections/input_files.h"
#include "sections/site_info.h"
#include "text_lines.h"

namespace sampler {
namespace {

/// A file mapped read-only for the lifetime of the index (the site text is never copied).
class MappedFile {
 public:
  MappedFile(void* address, size_t size) : address_(address), size_(size) {}
  ~MappedFile() {
    if (address_ != nullptr) munmap(address_, size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view text() const { return {static_cast<const char*>(address_), size_}; }

 private:
  void* address_;
  size_t size_;
};

/// Two sites bodies hold the same sites (a "\r" before "\n" does not count: one file may have CRLF ends).
bool same_sites(std::string_view a, std::string_view b) {
  if (a == b) return true;
  size_t pa = 0;
  size_t pb = 0;
  while (pa < a.size() && pb < b.size()) {
    if (text::next_line(a, pa) != text::next_line(b, pb)) return false;
  }
  return pa >= a.size() && pb >= b.size();
}

}  // namespace

struct SitesIndex::Impl {
  std::string section_name;
  std::vector<std::unique_ptr<MappedFile>> mappings;
  std::deque<std::string> owned_texts;  // deque: adding never moves the strings the index points into
  // Key: unit followed by scheme (the unit has a fixed length, so the concatenation is unambiguous).
  // unordered_map never moves its elements, so IndexedSites pointers stay valid.
  std::unordered_map<std::string, IndexedSites> by_key;

  bool add_text_view(const std::string& label, std::string_view text, DiagnosticSink& sink);
  bool add_file(const std::string& path, DiagnosticSink& sink);
  bool add_elf(const std::string& path, DiagnosticSink& sink);
  bool add_directory(const std::string& path, DiagnosticSink& sink);
};

bool SitesIndex::Impl::add_text_view(const std::string& label, std::string_view text, DiagnosticSink& sink) {
  bool ok = true;
  size_t sections = 0;
  bool parsed = parse_site_info(
      text, label,
      [&](const SitesSection& section) {
        ++sections;
        std::string key = section.unit + section.scheme;
        auto [it, inserted] = by_key.try_emplace(std::move(key));
        IndexedSites& entry = it->second;
        if (inserted) {
          entry.label = label;
          entry.unit = section.unit;
          entry.scheme = section.scheme;
          entry.body = section.body;
          entry.site_count = section.site_count;
          entry.line = section.line;
          return;
        }
        // docs/tools.md: identical sites in two FILEs are used once (the first FILE names them); different
        // sites cannot be told apart, so neither is used.
        if (same_sites(entry.body, section.body)) return;
        sink.error(label, section.line,
                   "sites for unit " + section.unit + " scheme " + section.scheme + " differ from those in " +
                       text::place(entry.label, entry.line) + "; samples of this unit and scheme are not resolved");
        entry.conflicting = true;
        ok = false;
      },
      sink);
  if (parsed && sections == 0) sink.warning(label, 0, "no sites sections");
  return parsed && ok;
}

bool SitesIndex::Impl::add_elf(const std::string& path, DiagnosticSink& sink) {
  bool ok = true;
  bool elf_ok = for_each_elf_section(
      path, section_name,
      [&](const ElfSection& found) {
        switch (found.status) {
          case ElfSection::Status::kFound:
            // The bytes live only during this call (they may have been decompressed): keep one copy.
            owned_texts.emplace_back(found.bytes);
            ok = add_text_view(found.label, owned_texts.back(), sink) && ok;
            break;
          case ElfSection::Status::kMissing:
            sink.warning(DiagnosticCode::kMissingSection, found.label, 0, "no section '" + section_name + "'");
            break;
          case ElfSection::Status::kEmpty:
            sink.warning(DiagnosticCode::kEmptySection, found.label, 0, "section '" + section_name + "' is empty");
            break;
        }
      },
      sink);
  return elf_ok && ok;
}

bool SitesIndex::Impl::add_file(const std::string& path, DiagnosticSink& sink) {
  // Check the kind first: a FIFO must not make the open wait, a device is never read.
  std::optional<InputFile> file = open_input(path, AcceptedKinds{.directory = true, .pipe = true}, sink);
  if (!file) return false;
  const int fd = file->fd.get();
  if (file->kind == FileKind::kDirectory) return add_directory(path, sink);

  if (file->kind == FileKind::kRegular) {
    char magic[8] = {};
    ssize_t got = pread(fd, magic, sizeof magic, 0);
    if (got < 0) {
      sink.error(DiagnosticCode::kCannotOpen, path, 0, std::string("cannot read: ") + std::strerror(errno));
      return false;
    }
    if (looks_like_elf_or_archive(std::string_view(magic, static_cast<size_t>(got)))) return add_elf(path, sink);
    if (file->size == 0) {
      sink.warning(path, 0, "no sites sections");
      return true;
    }
    void* address = mmap(nullptr, static_cast<size_t>(file->size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) {
      sink.error(DiagnosticCode::kCannotOpen, path, 0, std::string("cannot map: ") + std::strerror(errno));
      return false;
    }
    mappings.push_back(std::make_unique<MappedFile>(address, static_cast<size_t>(file->size)));
    return add_text_view(path, mappings.back()->text(), sink);
  }

  // A pipe (a process substitution, /dev/stdin): read it whole, with a bound, then parse like a file.
  std::string text;
  if (!read_to_end(fd, path, kMaxPipedFileSize, text, sink)) return false;
  if (looks_like_elf_or_archive(std::string_view(text).substr(0, 8))) {
    sink.error(DiagnosticCode::kNotRegularFile, path, 0, "an ELF file or archive must be a regular file");
    return false;
  }
  owned_texts.push_back(std::move(text));
  return add_text_view(path, owned_texts.back(), sink);
}

bool SitesIndex::Impl::add_directory(const std::string& path, DiagnosticSink& sink) {
  // Symbolic links to directories are not followed (no loops); symbolic links to files are (a samplerinfo tree
  // may link its .sites files).
  DirectoryWalk walk;
  walk.want_file = [](std::string_view name) { return name.size() > 6 && name.ends_with(".sites"); };
  std::vector<std::string> found;
  bool ok = walk_directory(path, walk, found, sink);
  if (found.empty()) {
    sink.warning(path, 0, "no *.sites files in this directory");
    return ok;
  }
  const std::filesystem::path root(path);
  for (const std::string& file : found) ok = add_file((root / file).string(), sink) && ok;
  return ok;
}

SitesIndex::SitesIndex(std::string section_name) : impl_(std::make_unique<Impl>()) {
  impl_->section_name = std::move(section_name);
}
SitesIndex::~SitesIndex() = default;
SitesIndex::SitesIndex(SitesIndex&&) noexcept = default;
SitesIndex& SitesIndex::operator=(SitesIndex&&) noexcept = default;

bool SitesIndex::add_path(const std::string& path, DiagnosticSink& sink) { return impl_->add_file(path, sink); }

bool SitesIndex::add_text(std::string label, std::string text, DiagnosticSink& sink) {
  impl_->owned_texts.push_back(std::move(text));
  return impl_->add_text_view(label, impl_->owned_texts.back(), sink);
}

const IndexedSites* SitesIndex::find(std::string_view unit, std::string_view scheme) const {
  std::string key;
  key.reserve(unit.size() + scheme.size());
  key += unit;
  key += scheme;
  auto it = impl_->by_key.find(key);
  return it == impl_->by_key.end() ? nullptr : &it->second;
}

size_t SitesIndex::size() const { return impl_->by_key.size(); }

}  // namespace sampler
