// Symbol uploads (collector/symbols_api.h): parts put together, checked with the formats library, stored by
// build ID.
#include "collector/symbols_api.h"

#include <algorithm>
#include <charconv>

#include "collector/console.h"  // Console::stored
#include "collector/request.h"
#include "sections/base64.h"
#include "sections/diagnostics.h"
#include "sections/gsym.h"
#include "sections/hex.h"
#include "sections/symbfile.h"

namespace sampler::collector {
namespace {


/// A header's decimal number; nullopt if it is not one (or does not fit 32 bits).
std::optional<uint32_t> header_number(std::string_view text) {
  uint32_t value = 0;
  auto [end, rc] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (rc != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

/// Checks a whole symbol file with the formats library; "" if it is well-formed, else what is wrong.
std::string check_symbol_file(std::string_view kind, std::string_view bytes, std::string_view build_id) {
  gsym::Error error;
  if (kind == "gsym") {
    std::optional<gsym::Reader> reader = gsym::Reader::open(bytes, error);
    if (!reader || !reader->verify(error)) return "GSYM byte " + std::to_string(error.offset) + ": " + error.message;
    // The GSYM header's UUID is the build ID (its first 20 bytes): a file for another binary is refused.
    const std::string_view uuid = reader->uuid();
    if (!uuid.empty() && uuid != build_id.substr(0, std::min(build_id.size(), gsym::kMaxUuidSize))) {
      return "the GSYM file's UUID " + hex_bytes(uuid) + " is not the FileID's build ID " + hex_bytes(build_id);
    }
    return "";
  }
  const symbfile::Kind which = kind == "ranges" ? symbfile::Kind::kRanges : symbfile::Kind::kReturnPads;
  if (!symbfile::File::parse(bytes, which, error)) {
    return "symbfile byte " + std::to_string(error.offset) + ": " + error.message;
  }
  return "";
}

}  // namespace

bool decode_file_id(std::string_view text, std::string& build_id, std::string& error) {
  base64::DecodedBytes decoded = base64::decode_url_to_vector(text);
  if (text.empty() || !decoded.ok || decoded.bytes.empty() || decoded.bytes.size() > 64) {
    error = text.empty() ? "the FileID header is missing (base64 of the ELF build ID)"
            : !decoded.ok ? "the FileID header is not base64: " + decoded.error + " at character " +
                                std::to_string(decoded.error_offset + 1)
                          : "the FileID header must hold a build ID of 1 to 64 bytes";
    return false;
  }
  build_id.assign(decoded.bytes.begin(), decoded.bytes.end());
  return true;
}

void SymbolAssembler::drop_stale(double now) {
  for (auto it = partial_.begin(); it != partial_.end();) {
    if (now - it->second.touched > timeout_seconds_) {
      pending_bytes_ -= it->second.cost;
      it = partial_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t SymbolAssembler::pending_bytes() const {
  std::lock_guard lock(mutex_);
  return pending_bytes_;
}

SymbolAssembler::Status SymbolAssembler::add(const std::string& key, uint32_t part, uint32_t parts,
                                             std::string_view bytes, double now, std::string& file,
                                             uint32_t& received, std::string& error) {
  std::lock_guard lock(mutex_);
  drop_stale(now);
  if (parts == 1) {  // the whole file in one request: nothing to keep
    if (bytes.size() > max_file_bytes_) return Status::kTooLarge;
    file.assign(bytes);
    received = 1;
    return Status::kComplete;
  }
  auto it = partial_.find(key);
  if (it != partial_.end() && it->second.parts.size() != parts) {
    error = "FileParts " + std::to_string(parts) + " differs from the " + std::to_string(it->second.parts.size()) +
            " of the parts already received for this file";
    return Status::kBad;
  }
  const size_t replaced = it != partial_.end() && it->second.parts[part] ? it->second.parts[part]->size() : 0;
  const size_t file_bytes = (it != partial_.end() ? it->second.bytes : 0) - replaced + bytes.size();
  if (file_bytes > max_file_bytes_) {
    if (it != partial_.end()) {
      pending_bytes_ -= it->second.cost;
      partial_.erase(it);
    }
    return Status::kTooLarge;
  }
  // A new partial file is also charged for its table of parts (FileParts entries, sent before any byte).
  const size_t table = it != partial_.end() ? 0 : parts * sizeof(std::optional<std::string>) + 256;
  if (pending_bytes_ + table - replaced + bytes.size() > max_pending_bytes_ ||
      (it == partial_.end() && partial_.size() >= kMaxPartialFiles)) {
    return Status::kBusy;
  }
  if (it == partial_.end()) {
    it = partial_.emplace(key, Partial{}).first;
    it->second.parts.resize(parts);
    it->second.cost = table;
  }
  Partial& p = it->second;
  if (!p.parts[part]) ++p.received;
  p.parts[part] = std::string(bytes);
  p.bytes = file_bytes;
  p.cost = p.cost - replaced + bytes.size();
  pending_bytes_ = pending_bytes_ + table - replaced + bytes.size();
  p.touched = now;
  received = p.received;
  if (p.received < parts) return Status::kIncomplete;
  file.clear();
  file.reserve(p.bytes);
  for (const std::optional<std::string>& piece : p.parts) file += *piece;
  pending_bytes_ -= p.cost;
  partial_.erase(it);
  return Status::kComplete;
}

Response Collector::upload_symbols(const Request& request, double now) {
  std::string_view kind = request.path.substr(std::string_view("/api/symbols-").size());
  if (kind != "gsym" && kind != "ranges" && kind != "returnpads") {
    return failure(404, "not-found", "no such path (POST /api/symbols-gsym, -ranges or -returnpads)");
  }
  KeyTable::Holder holder;
  if (std::optional<Response> refused =
          admit(request, now, &KeyTable::Holder::symbols, "this API key may not push symbols (keys.tsv: symbols)",
                ": send the file in more parts (FilePart, FileParts)", holder))
    return *refused;
  const std::string& app = holder.app;
  std::string build_id, error;
  if (!decode_file_id(request.file_id, build_id, error)) return failure(400, "bad-file-id", error, app);
  std::optional<uint32_t> parts = request.file_parts.empty() ? 1 : header_number(request.file_parts);
  std::optional<uint32_t> part = request.file_part.empty() ? 0 : header_number(request.file_part);
  if (!parts || *parts == 0 || *parts > symbol_parts_.max_parts()) {
    return failure(400, "bad-file-parts",
                   "FileParts must be a number from 1 to " + std::to_string(symbol_parts_.max_parts()), app);
  }
  if (!part || *part >= *parts) {
    return failure(400, "bad-file-part", "FilePart must be a number from 0 to FileParts - 1", app);
  }
  const std::string id_hex = hex_bytes(build_id);
  std::string file;
  uint32_t received = 0;
  switch (symbol_parts_.add(app + '\n' + std::string(kind) + '\n' + id_hex, *part, *parts, request.body, now, file,
                            received, error)) {
    case SymbolAssembler::Status::kIncomplete: {
      Response response;
      response.body = "{\"success\": true, \"status\": 200, \"build_id\": \"" + id_hex +
                      "\", \"parts_received\": " + std::to_string(received) + ", \"parts\": " +
                      std::to_string(*parts) + "}\n";
      return response;
    }
    case SymbolAssembler::Status::kBad: return failure(400, "bad-file-parts", error, app);
    case SymbolAssembler::Status::kTooLarge:
      return failure(413, "symbols-too-large",
                     "the symbol file is larger than " + std::to_string(limits_.max_symbol_bytes) + " bytes", app);
    case SymbolAssembler::Status::kBusy:
      return failure(503, "symbols-busy", "too many partial symbol uploads under way: try again later", app);
    case SymbolAssembler::Status::kComplete: break;
  }
  if (std::string problem = check_symbol_file(kind, file, build_id); !problem.empty()) {
    return failure(400, "bad-symbols", problem, app);
  }
  store::SymbolFile stored{id_hex, std::string(kind), app, 0, std::move(file)};
  // Stored under the pushing key's application: another application's key cannot reach this one's symbols.
  store::PutStatus status = store_.put_symbols(stored, holder.replace_symbols, error);
  if (status == store::PutStatus::kError) return failure(503, "storage-error", error, app);
  if (status == store::PutStatus::kConflict) {
    return failure(409, "symbols-conflict",
                   "a different " + std::string(kind) + " file is already stored for build ID " + id_hex +
                       " (only a key with replace-symbols may replace it)",
                   app);
  }
  console_->stored(app);  // the next page of the application names crashes with them (Console::set_fresh_window)
  Response response;
  response.body = "{\"success\": true, \"status\": 200, \"build_id\": \"" + id_hex + "\", \"kind\": \"" +
                  std::string(kind) + "\", \"duplicate\": " +
                  (status == store::PutStatus::kDuplicate ? "true" : "false") + "}\n";
  return response;
}

}  // namespace sampler::collector
