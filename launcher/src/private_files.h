// The files sampler-run keeps for its user (configuration, spool, the last report, the libraries cache): only
// ever under a directory that the user alone can write, never a shared one such as /tmp, and never through a
// link or into a file someone else owns. sampler-run often runs as root (services, cron, `env -i`): a directory
// another user could create first would let that user redirect root's reports or overwrite root's files.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sampler::launcher {

/// The user's base directory of one XDG kind: the variable `xdg_variable` (XDG_CONFIG_HOME, XDG_CACHE_HOME) when
/// it is absolute and names a directory the effective user owns and only it can write; else HOME/`under_home`
/// when HOME is such a directory; else "" (no state and no configuration). `why` says what was refused.
std::string user_base_dir(const char* xdg_variable, const char* under_home, std::string& why);

/// Creates `dir` when missing (mode 0700; missing parents too), then checks it: a directory, not a symbolic
/// link, owned by the effective user, not writable by group or others. False with `why` when it is not.
bool make_private_dir(const std::string& dir, std::string& why);

/// Reads at most `max_bytes` of a file the effective user owns and only it can write, opened without following
/// a link and without blocking (a FIFO is refused). False with `why` when it cannot be read or is not such a
/// file; `missing` tells a file that does not exist apart.
bool read_private_file(const std::string& path, size_t max_bytes, std::string& bytes, std::string& why,
                       bool* missing = nullptr);

/// Opens `path` for reading and writing, created 0600 when missing, without following a link; -1 when it cannot,
/// or when the file is not a regular file of the effective user's.
int open_private_file(const std::string& path);

/// A file name for a cache entry keyed by `key` (any text): 16 hex digits of its 64-bit FNV-1a hash. Not a
/// security measure: the cache is the user's own, and a collision only makes an entry miss.
std::string hashed_file_name(std::string_view key);

/// Writes `bytes` to `path` through a new temporary file (0600, O_EXCL, never through a link) renamed over it.
bool write_private_file(const std::string& path, std::string_view bytes);

}  // namespace sampler::launcher
