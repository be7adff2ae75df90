// The console: what the collector stored, as HTML pages under /ui/ (docs/collection.md, "The console"), for keys
// whose keys.tsv line grants `read`, each key seeing only the applications of its own lines. Read-only: every
// page is a GET; the only POSTs are the login form (which sets the key's cookie) and logging out.
//
// The pages come from the analysis library, not from a second implementation: runs are read with read_runs()
// straight from the store's text, crashes grouped with the symbolized signatures sampler-analyze uses (the
// symbols the collector stored), predictors ranked by rank() and shown by the same renderer as
// `sampler-analyze --html` (analysis/html.h). The predictor pages keep what they read of each application's runs
// and read only the runs stored since (analysis/runs.h, RunReader; docs/decisions.md, "The runs kept between
// pages").
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/page_workers.h"
#include "collector/request.h"
#include "store/store.h"

namespace sampler::collector {

struct AppRuns;  // an application's runs as the console read them (console.cpp)
struct KeptCounts;  // the database's counts kept between predictor pages (console.cpp)

class Console {
 public:
  /// `keys` must outlive the console. `site_dir`: each application's site information is under
  /// SITE_DIR/APP (what `sampler-analyze --sites` takes: *.sites files, ELF files); "" for none (then the
  /// predictor pages say so, and the crash pages still work).
  Console(store::Store& store, const KeyTable& keys, std::string site_dir = {});
  ~Console();
  void set_site_dir(std::string site_dir) { site_dir_ = std::move(site_dir); }
  /// Answers a request whose path is /ui or below. Thread-safe.
  Response handle(const Request& request);

  /// The most memory the runs kept between predictor pages may take, over all applications (an estimate), and
  /// apart from them the most the database's counts kept may take; the applications whose pages were made last
  /// are kept. 0: none is kept.
  void set_kept_bytes(size_t bytes);
  static constexpr size_t kDefaultKeptBytes = size_t{256} << 20;
  /// What is kept now (the bytes and the applications that hold runs), and how many applications were dropped
  /// to stay within set_kept_bytes() since the start (GET /metrics). Thread-safe.
  struct KeptStats {
    size_t bytes = 0, apps = 0;
    size_t counts_bytes = 0;  ///< the database's counts kept (PostgreSQL), bounded apart from the runs
    uint64_t dropped = 0;
  };
  KeptStats kept_stats() const;

  /// Pages of an application (its own page and the predictor pages) made within the last `seconds` are served
  /// again instead of being made anew, unless this collector stored a run or symbols of the application since
  /// (stored()); each such page says when it was made. 0: every page is made for its request.
  void set_fresh_window(double seconds) { fresh_.set_window(seconds); }
  static constexpr double kDefaultFreshSeconds = 5;
  /// This collector stored a run or symbols of `app` (committed): its pages are made anew. Thread-safe.
  void stored(const std::string& app) { fresh_.stored(app); }

  /// The name of the cookie that carries the key (HttpOnly, SameSite=Strict, Path=/ui/).
  static constexpr std::string_view kCookie = "sampler_key";
  /// The largest login form (POST /ui/login, the one body read without a key): a key, nothing more.
  static constexpr size_t kMaxLoginBody = 4096;

 private:
  /// The applications `key` may read (sorted), and whether the key is known at all.
  std::vector<std::string> readable(std::string_view key, bool& known) const;
  Response login(const Request& request);
  /// `made_note`: what a page that may be served again says of when it was made ("" for none).
  Response page(int status, std::string_view title, std::string_view body, bool signed_in,
                std::string_view made_note = {}) const;
  Response login_page(int status, std::string_view message) const;

  /// A predictor page (`tail`: "predictors/", "release/V/" or "group/N/" under the application's path); `counts`:
  /// the database's counts for its first round, or null (the page counts its runs itself).
  Response predictor_page(const std::string& app, std::string_view tail, const AppRuns& runs, const KeptCounts* counts,
                          std::string_view made_note);
  /// An application's page or predictor page (`tail` under the application's path), made from the store.
  Response app_page(const std::string& app, std::string_view tail, std::string_view made_note);

  struct Kept;  // the runs kept between predictor pages (console.cpp)

  store::Store& store_;
  const KeyTable& keys_;
  std::string site_dir_;
  std::string content_security_policy_;
  std::unique_ptr<Kept> kept_;
  FreshPages fresh_;
};

/// What a run adds to the counts a store keeps (store.h, SectionCounts), from its summary (analysis/run_summary.h):
/// the run itself when it has a samples subreport, and each samples section under a key of its unit, scheme and
/// shape. Unset when the summary does not read, or names a unit and scheme twice (the page counts such a run
/// itself, as read_runs() merges the sections).
std::optional<std::vector<store::SectionCounts>> summary_counts(std::string_view summary);

/// The key a request presents: the Authorization header's "APIKey KEY", else the console's cookie; "" if none.
std::string presented_key(const Request& request);

/// Percent-encoding of every byte but the URL's unreserved ones (A-Z a-z 0-9 - . _ ~): a path segment or a
/// cookie value. percent_decode() reverses it (and reads '+' as a space when `plus_is_space`, as forms send).
std::string percent_encode(std::string_view text);
std::string percent_decode(std::string_view text, bool plus_is_space = false);

}  // namespace sampler::collector
