// Symbol uploads (the symbfile format, "Symbfiles are uploaded via a REST API"): POST /api/symbols-gsym,
// /api/symbols-ranges and /api/symbols-returnpads. The body is one part of a file; the headers say which:
//
//   FileID: BASE64       the ELF build ID the file describes (base64url without padding, as in the symbfile
//                        upload API's example "d--nFqkSpJIXRFeHMp_Smg", or standard base64)
//   FilePart: I          part number 0..N-1 (absent: 0)
//   FileParts: N         number of parts (absent: 1)
//   Authorization: APIKey KEY
//
// Parts may come in any order, on any connection; the file is put together in memory once every part is there,
// checked with the formats library (GSYM reader, symbfile reader), and stored by application (the pushing key's),
// build ID and kind (store::SymbolFile).
// Memory is bounded: a file's size and part count, the bytes of all partial files together (each also charged
// for its table of parts), their number (kMaxPartialFiles), and a partial file that receives no part for
// Limits::symbol_part_timeout_seconds is dropped.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sections/base64.h"

namespace sampler::collector {

struct Limits;

/// The build ID (raw bytes, 1 to 64 of them) of a FileID header; false and `error` when it is not base64.
bool decode_file_id(std::string_view text, std::string& build_id, std::string& error);

/// The FileID header's text of a build ID: base64url without padding (the symbfile upload API's spelling).
inline std::string encode_file_id(std::string_view build_id) {
  return base64::encode_to_url_string(std::span(reinterpret_cast<const uint8_t*>(build_id.data()), build_id.size()));
}

/// Partial symbol files, keyed by uploader, kind and build ID. Thread-safe.
class SymbolAssembler {
 public:
  /// The most partial files kept at once: beyond, kBusy (the stale-file sweep of each request stays short).
  static constexpr size_t kMaxPartialFiles = 1024;

  SymbolAssembler(size_t max_file_bytes, uint32_t max_parts, size_t max_pending_bytes, double timeout_seconds)
      : max_file_bytes_(max_file_bytes), max_parts_(max_parts), max_pending_bytes_(max_pending_bytes),
        timeout_seconds_(timeout_seconds) {}

  enum class Status {
    kIncomplete,  ///< stored the part; `received` parts of the file are here
    kComplete,    ///< the last part: `file` holds the whole file, nothing of it stays here
    kBad,         ///< FilePart/FileParts do not fit the parts already received (`error` says how)
    kTooLarge,    ///< the file would exceed max_file_bytes (its parts are dropped)
    kBusy,        ///< partial files already hold max_pending_bytes, or there are kMaxPartialFiles: try later
  };
  /// Adds part `part` of `parts` of the file `key` at time `now` (monotonic seconds). A part sent again replaces
  /// the earlier copy (a retried request).
  Status add(const std::string& key, uint32_t part, uint32_t parts, std::string_view bytes, double now,
             std::string& file, uint32_t& received, std::string& error);
  uint32_t max_parts() const { return max_parts_; }
  size_t pending_bytes() const;

 private:
  struct Partial {
    std::vector<std::optional<std::string>> parts;
    uint32_t received = 0;
    size_t bytes = 0;   // the parts' bytes
    size_t cost = 0;    // what it is charged against max_pending_bytes: bytes and its table of parts
    double touched = 0;
  };
  void drop_stale(double now);  // with mutex_ held

  size_t max_file_bytes_;
  uint32_t max_parts_;
  size_t max_pending_bytes_;
  double timeout_seconds_;
  mutable std::mutex mutex_;
  std::map<std::string, Partial> partial_;
  size_t pending_bytes_ = 0;
};

}  // namespace sampler::collector
