// Crash groups by symbolized top frames: a crash's signature names the functions and source lines of
// its top frames, looked up in symbol files by build ID, instead of module-relative addresses.
//
// When: lazily, as the runs are read for an analysis (docs/decisions.md, "Symbolizing stored crashes"): a stored
// report keeps its raw stack, and each analysis uses the symbols known at that time, whether they were pushed
// before or after the crash was uploaded. The symbols come from a directory (`sampler-analyze --symbols DIR`:
// BUILDID.gsym and the symbfiles) or from the collector's store (`--database`: StoreSymbols).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sections/symbolize_markup.h"
#include "store/store.h"

namespace sampler::analysis {

/// The signature of a crash from its main-backtrace body: the signal name, then the top `frames` frames
/// (inlined calls count as frames), each "FUNCTION (FILE:LINE)" where `symbols` know the address and
/// "MODULE+0xOFFSET" where they do not; leading frames in system libraries are skipped as crash_signature()
/// skips them. Caller frames are looked up in return pads first, then GSYM, then ranges. Thread-safe if
/// `symbols` is (GsymDirectory and StoreSymbols are).
std::string symbolized_crash_signature(std::string_view body, size_t frames, SymbolSource& symbols);

/// Symbol files the collector stored for `app` (store::Store::get_symbols), fetched once per build ID when first
/// needed: only the application's own, never a file another application's key pushed for the same build ID.
/// Thread-safe. A stored file that does not read is reported to the sink once and treated as absent.
class StoreSymbols : public SymbolSource {
 public:
  StoreSymbols(store::Store& store, std::string app, DiagnosticSink& sink)
      : store_(store), app_(std::move(app)), sink_(sink) {}
  const gsym::Reader* find(const std::vector<uint8_t>& build_id) override;
  const symbfile::File* find_symbfile(const std::vector<uint8_t>& build_id, symbfile::Kind kind) override;

 private:
  struct Entry {
    bool fetched = false;
    std::string gsym_bytes;
    std::optional<gsym::Reader> gsym;
    std::map<symbfile::Kind, std::unique_ptr<symbfile::File>> symbfiles;
    std::map<symbfile::Kind, bool> symbfiles_fetched;
  };
  Entry& entry(const std::vector<uint8_t>& build_id);  // with mutex_ held

  store::Store& store_;
  std::string app_;
  DiagnosticSink& sink_;
  std::mutex mutex_;
  std::map<std::vector<uint8_t>, std::unique_ptr<Entry>> entries_;
};

}  // namespace sampler::analysis
