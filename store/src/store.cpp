// open_store() and the body compression both implementations share.
#include "store/store.h"

#include <zlib.h>

#include <algorithm>
#include <map>

#include "store_impl.h"

namespace sampler::store {

std::unique_ptr<Store> open_store(std::string_view url, std::string& error) {
  constexpr std::string_view kSqlite = "sqlite:";
  if (url.starts_with(kSqlite)) {
    std::string path(url.substr(kSqlite.size()));
    if (path.empty()) {
      error = "sqlite: URL without a file name (expected sqlite:PATH)";
      return nullptr;
    }
    return open_sqlite(path, error);
  }
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) return open_postgresql(url, error);
  error = "unknown database URL '" + std::string(url.substr(0, 200)) +
          "' (expected sqlite:PATH or postgresql://...)";
  return nullptr;
}

std::string compress_body(std::string_view text) {
  // Fastest level: the collector compresses on its request path; a report's counters compress well anyway.
  uLongf size = compressBound(static_cast<uLong>(text.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(text.data()),
                static_cast<uLong>(text.size()), Z_BEST_SPEED) != Z_OK) {
    return {};
  }
  out.resize(size);
  return out;
}

bool decompress_body(std::string_view stored, int64_t size, std::string& text) {
  if (size < 0 || size >= (int64_t{1} << 32)) return false;
  text.assign(static_cast<size_t>(size), '\0');
  z_stream stream{};
  // 15 + 32: a zlib or a gzip header, whichever the bytes start with.
  if (inflateInit2(&stream, 15 + 32) != Z_OK) return false;
  // An empty body still has a stream; an empty buffer pointer is not allowed, so give a dummy byte.
  Bytef dummy = 0;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(stored.data()));
  stream.avail_in = static_cast<uInt>(stored.size());
  stream.next_out = size == 0 ? &dummy : reinterpret_cast<Bytef*>(text.data());
  stream.avail_out = size == 0 ? 1 : static_cast<uInt>(size);
  int rc = inflate(&stream, Z_FINISH);
  bool ok = rc == Z_STREAM_END && stream.total_out == static_cast<uLong>(size) && stream.avail_in == 0;
  inflateEnd(&stream);
  return ok;
}

std::vector<SectionTotals> sum_rows(const std::vector<const CountsRow*>& rows, const CountsQuery& query) {
  std::map<std::pair<bool, std::string_view>, SectionTotals> found;
  auto add = [](std::vector<uint64_t>& into, const std::vector<uint64_t>& counts) {
    if (into.size() < counts.size()) into.resize(counts.size(), 0);
    for (size_t i = 0; i < counts.size(); ++i) into[i] += counts[i];
  };
  for (const CountsRow* row : rows) {
    if (query.version && row->version != *query.version) continue;
    if (query.failing_signatures && row->failed &&
        std::find(query.failing_signatures->begin(), query.failing_signatures->end(), row->crash_signature) ==
            query.failing_signatures->end())
      continue;
    SectionTotals& t = found[{row->failed, row->key}];
    t.failed = row->failed;
    t.key = row->key;
    t.runs += row->runs;
    add(t.sites, row->sites);
    add(t.predicates, row->predicates);
  }
  std::vector<SectionTotals> totals;
  for (auto& entry : found) {
    // As the database's sum leaves out the ids whose sum is 0: the arrays end at their last count.
    for (std::vector<uint64_t>* counts : {&entry.second.sites, &entry.second.predicates}) {
      while (!counts->empty() && counts->back() == 0) counts->pop_back();
    }
    totals.push_back(std::move(entry.second));
  }
  return totals;
}

}  // namespace sampler::store
