// find-sampler-info's logic: walk an RPM build root, find every ELF file (or ar archive) that carries static site
// information, and save that information beside the build root's other files as a .sites file, the way
// find-debuginfo saves debug information (the sampler manual, "Embedding and Extraction"; docs/packaging.md).
//
// For BUILDROOT/REL (an ELF file or archive with a non-empty .debug_site_info), it writes
//     BUILDROOT/usr/lib/sampler/sites/REL.sites
// holding exactly what `extract-section .debug_site_info BUILDROOT/REL` prints (the section of the file, or of
// each archive member in order, NUL bytes removed, compressed sections decompressed), except that an optional
// PrefixRewrite replaces a build-directory prefix in the FILE FIELD (the first tab-separated field) of each site
// line. Nothing else changes: <sites> tags, the other fields and the line ends are copied byte for byte.
//
// The ELF files themselves are only ever opened for reading; removing the section from the shipped binaries is
// left to rpm's stripping (brp-strip, find-debuginfo), since `strip --strip-debug` removes every .debug_* section.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "sections/diagnostics.h"

namespace sampler::packaging {

/// Replaces a build-directory prefix in site file names, as `debugedit -b BASE -d DEST` does in DWARF.
/// The prefix matches whole path components: BASE "/b/x" matches "/b/x" and "/b/x/y.c", never "/b/xy.c".
/// Trailing slashes of both are ignored ("/" as BASE matches every absolute name). An empty DEST removes the
/// prefix and the slash after it, leaving a name relative to BASE.
class PrefixRewrite {
 public:
  /// `base_dir` must not be empty; neither may contain a tab, a newline or a carriage return (they would break
  /// the line format). Returns nullopt otherwise.
  static std::optional<PrefixRewrite> make(std::string_view base_dir, std::string_view dest_dir);

  /// The rewritten name, or nullopt if `file` does not start with the base directory.
  std::optional<std::string> apply(std::string_view file) const;

 private:
  PrefixRewrite() = default;
  std::string base_;  // without trailing slashes ("" for "/")
  std::string dest_;  // without trailing slashes
  bool relative_ = false;  // DEST was empty: drop the prefix and its slash
};

/// Rewrites the file field of every site line in `text` (site information, NUL bytes already removed) and
/// returns the result. The text is validated with parse_site_info(): problems go to `sink` naming
/// `source_name`; lines outside well-formed sections are copied unchanged. `rewritten_lines`, if given, receives
/// the number of site lines whose file field changed. With `rewrite` null the text is only validated and
/// returned as it is.
std::string rewrite_site_files(std::string_view text, std::string_view source_name, const PrefixRewrite* rewrite,
                               DiagnosticSink& sink, size_t* rewritten_lines = nullptr);

/// What find_sampler_info() does.
struct FindOptions {
  std::string build_root;                          ///< the tree to walk (RPM's %{buildroot})
  std::string section_name = ".debug_site_info";   ///< the ELF section to save
  std::string sites_dir = "usr/lib/sampler/sites";  ///< where the .sites files go, relative to build_root
  std::optional<PrefixRewrite> rewrite;            ///< build-directory prefix to rewrite, if any
  bool dry_run = false;                            ///< find and report, write nothing
};

/// One ELF file or archive found carrying the section.
struct FoundSites {
  std::string elf;           ///< its path relative to the build root
  std::string sites;         ///< the .sites file written, relative to the build root (also set in a dry run)
  size_t bytes = 0;          ///< size of the site information
  size_t rewritten_lines = 0;  ///< site lines whose file name was rewritten
};

/// Walks options.build_root in sorted path order without following symbolic links, skipping the sites
/// directory itself and usr/lib/debug (find-debuginfo's separate debug files carry the section legitimately).
/// Regular files that start like ELF or ar are read with for_each_elf_section(); everything else is ignored, and
/// so are archive members that are not ELF (LLVM bitcode, .deb contents): they cannot carry an ELF section.
/// `on_found` is called for each file carrying the section, after its .sites file was written. Problems
/// (unreadable directory or file, malformed ELF, malformed site information, a .sites file that cannot be
/// written) go to `sink`; the walk carries on. Returns true if no error was reported.
bool find_sampler_info(const FindOptions& options, const std::function<void(const FoundSites&)>& on_found,
                       DiagnosticSink& sink);

}  // namespace sampler::packaging
