// Finding the static sites a user names (docs/tools.md, the FILE arguments of resolveSamples and
// resolveTimestamps): the file-system half of the join in sections/resolve.h.
//
// A SitesIndex gathers the sites sections of every FILE (.sites files, ELF files or ar archives, directories
// searched recursively for *.sites, pipes such as a process substitution) under their (unit, scheme) key. It never
// copies site text from a regular file: a .sites file is mapped read-only and the index points into the mapping; an
// ELF section is copied out of libelf once (it may have been decompressed), and a pipe is read whole (at most
// kMaxPipedFileSize bytes), and likewise pointed into. The index keeps everything alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sections/diagnostics.h"

namespace sampler {

/// The ELF section that holds site information unless the user names another (docs/formats.md section 2).
inline constexpr std::string_view kDefaultSitesSection = ".debug_site_info";

/// One sites section as the index keeps it.
struct IndexedSites {
  std::string label;      ///< the FILE column: the .sites path, the ELF path or "lib.a(member.o)"
  std::string unit;       ///< 32 lower-case hex digits
  std::string scheme;
  std::string_view body;  ///< the site lines, each ending in "\n" (may hold "\r"); points into the index's text
  size_t site_count = 0;  ///< lines in body
  uint64_t line = 0;      ///< line of the <sites> tag in `label`
  bool conflicting = false;  ///< another FILE had different sites for this key: it is not resolved
};

/// Every sites section of a set of FILEs, by (unit, scheme). Movable, not copyable; the IndexedSites pointers it
/// hands out stay valid as long as the index lives (adding more files does not move them).
class SitesIndex {
 public:
  /// `section_name` is the ELF section read from ELF files and archives (".debug_X" also finds ".zdebug_X").
  explicit SitesIndex(std::string section_name = std::string(kDefaultSitesSection));
  ~SitesIndex();
  SitesIndex(SitesIndex&&) noexcept;
  SitesIndex& operator=(SitesIndex&&) noexcept;

  /// Adds one FILE argument: a directory (every regular file named *.sites below it, recursively, in sorted
  /// path order), an ELF file or ar archive (told by its magic bytes; an ELF without the section gets a
  /// warning), site information text (mapped read-only), or a pipe holding such text (read whole, at most
  /// kMaxPipedFileSize bytes). Devices are refused (/dev/zero never ends), and a FIFO is opened without waiting
  /// for a writer (one that has none reads as empty). The same key with identical sites in a later file
  /// is ignored (the first FILE names it); with different sites it is an error naming both places, and the key
  /// is marked conflicting. Problems go to `sink`; returns true if no error was reported.
  bool add_path(const std::string& path, DiagnosticSink& sink);

  /// Adds site information text that the index then owns (tests, fuzzing); `label` is its FILE column.
  bool add_text(std::string label, std::string text, DiagnosticSink& sink);

  /// The sites for (unit, scheme), or nullptr if no FILE had them. A conflicting entry is still returned.
  const IndexedSites* find(std::string_view unit, std::string_view scheme) const;

  /// Number of distinct (unit, scheme) keys.
  size_t size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sampler
