// Symbol uploads (collector/symbols_api.h): whole and chunked files (parts in any order), duplicates,
// the failures (401, 413, 400 naming what is wrong, 503 when partial files fill their budget), and stale
// partial files dropped. Files are made by the real writers (GSYM, symbfile) and read back from the store.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "collector/request.h"
#include "sections/gsym.h"
#include "sections/symbfile.h"
#include "symbols/gsym_writer.h"
#include "symbols/symbfile.h"

namespace sampler::collector {
namespace {

const std::string kBuildId("\x12\x34\x56\x78\x9a\xbc\xde\xf0\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc", 20);

std::vector<symbols::Function> functions() {
  symbols::Function f{0x1000, 0x40, "main", {{0x1000, "/src/a.c", 10}, {0x1010, "/src/a.c", 11}}, {}};
  symbols::Function g{0x1040, 0x20, "helper", {{0x1040, "/src/b.c", 3}}, {}};
  return {f, g};
}

class SymbolsApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("symbols-api-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir_);
    std::string error;
    store_ = store::open_store("sqlite:" + (dir_ / "r.db").string(), error);
    ASSERT_NE(store_, nullptr) << error;
    KeyTable keys;
    // "good" may push symbols; "reporter" is an application's key as its users get it: reports only; "build"
    // may also replace a stored file; "intruder" pushes another application's symbols.
    ASSERT_TRUE(keys.load("app\tgood\treports,symbols\napp\treporter\napp\tbuild\treplace-symbols\n"
                          "other\tintruder\tsymbols\n",
                          error))
        << error;
    Limits limits;
    limits.max_body_bytes = 4096;
    limits.max_symbol_bytes = 64 * 1024;
    limits.max_pending_symbol_bytes = 100 * 1024;
    limits.symbol_part_timeout_seconds = 60;
    limits.rate_burst = 1e9;
    collector_ = std::make_unique<Collector>(*store_, std::move(keys), limits);
  }
  void TearDown() override {
    collector_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  Response post(std::string_view kind, std::string_view body, std::string_view file_id, std::string_view part = "",
                std::string_view parts = "", double now = 0, std::string_view key = "APIKey good") {
    Request request;
    request.method = "POST";
    request.path = path_ = "/api/symbols-" + std::string(kind);
    request.authorization = key;
    request.content_type = "application/octet-stream";
    request.body = body;
    request.body_too_large = body.size() > collector_->limits().max_body_bytes;
    request.file_id = file_id;
    request.file_part = part;
    request.file_parts = parts;
    return collector_->handle(request, now);
  }
  /// Sends `file` in parts of `size` bytes, in the order `order` gives (indices of parts).
  Response post_parts(std::string_view kind, const std::string& file, size_t size, std::vector<size_t> order,
                      double now = 0) {
    const size_t parts = (file.size() + size - 1) / size;
    Response last;
    for (size_t i : order) {
      last = post(kind, std::string_view(file).substr(i * size, size), encode_file_id(kBuildId), std::to_string(i),
                  std::to_string(parts), now);
      if (last.status != 200) return last;
    }
    return last;
  }
  std::string stored(std::string_view kind, std::string_view app = "app") {
    std::string bytes, error;
    EXPECT_NE(store_->get_symbols(app, "123456789abcdef0112233445566778899aabbcc", kind, bytes, error),
              store::GetStatus::kError)
        << error;
    return bytes;
  }

  std::filesystem::path dir_;
  std::string path_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Collector> collector_;
};

TEST(FileId, Base64UrlAndStandardBothDecode) {
  std::string id, error;
  ASSERT_TRUE(decode_file_id("d--nFqkSpJIXRFeHMp_Smg", id, error)) << error;  // the symbfile upload API's example
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(encode_file_id(id), "d--nFqkSpJIXRFeHMp_Smg");
  std::string again;
  ASSERT_TRUE(decode_file_id("d++nFqkSpJIXRFeHMp/Smg==", again, error)) << error;
  EXPECT_EQ(again, id);
  EXPECT_FALSE(decode_file_id("not base64!", id, error));
  EXPECT_NE(error.find("not base64"), std::string::npos) << error;
  EXPECT_FALSE(decode_file_id("", id, error));
  EXPECT_NE(error.find("missing"), std::string::npos) << error;
}

TEST_F(SymbolsApiTest, WholeFileIsCheckedAndStoredByBuildId) {
  const std::string gsym = symbols::write_gsym(functions(), kBuildId);
  ASSERT_LT(gsym.size(), 4096u);
  Response r = post("gsym", gsym, encode_file_id(kBuildId));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body,
            "{\"success\": true, \"status\": 200, \"build_id\": \"123456789abcdef0112233445566778899aabbcc\", "
            "\"kind\": \"gsym\", \"duplicate\": false}\n");
  EXPECT_EQ(stored("gsym"), gsym);
  Response again = post("gsym", gsym, encode_file_id(kBuildId));
  EXPECT_EQ(again.status, 200);
  EXPECT_NE(again.body.find("\"duplicate\": true"), std::string::npos) << again.body;
}

TEST_F(SymbolsApiTest, ChunkedPartsInAnyOrderAreReassembled) {
  // A ranges symbfile of many functions, larger than one request body.
  std::vector<symbols::Function> many;
  for (uint64_t i = 0; i < 400; ++i) {
    many.push_back({0x1000 + i * 0x40, 0x40, "function_number_" + std::to_string(i),
                    {{0x1000 + i * 0x40, "/src/file" + std::to_string(i % 7) + ".c", static_cast<uint32_t>(i + 1)}},
                    {}});
  }
  const std::string ranges = symbols::write_symbfile_ranges(many);
  ASSERT_GT(ranges.size(), 3 * 4096u);
  const size_t size = 4000, parts = (ranges.size() + size - 1) / size;
  std::vector<size_t> order;
  for (size_t i = parts; i-- > 0;) order.push_back(i);  // last part first
  std::swap(order[1], order[parts - 1]);
  // Every part but the last answers how many are here.
  Response first = post_parts("ranges", ranges, size, {order[0]});
  EXPECT_NE(first.body.find("\"parts_received\": 1, \"parts\": " + std::to_string(parts)), std::string::npos)
      << first.body;
  // A part sent twice (a retried request) is no second part.
  post_parts("ranges", ranges, size, {order[0]});
  Response last = post_parts("ranges", ranges, size, std::vector<size_t>(order.begin() + 1, order.end()));
  ASSERT_EQ(last.status, 200) << last.body;
  EXPECT_NE(last.body.find("\"kind\": \"ranges\""), std::string::npos) << last.body;
  const std::string back = stored("ranges");
  EXPECT_EQ(back, ranges);
  gsym::Error error;
  auto file = symbfile::File::parse(back, symbfile::Kind::kRanges, error);
  ASSERT_TRUE(file) << error.message;
  gsym::LookupResult result;
  ASSERT_TRUE(file->lookup_ranges(0x1000 + 123 * 0x40 + 5, result));
  ASSERT_EQ(result.frames.size(), 1u);
  EXPECT_EQ(result.frames[0].name, "function_number_123");
  EXPECT_EQ(result.frames[0].line, 124u);
  EXPECT_EQ(collector_->handle({}, 0).status, 404);
}

TEST_F(SymbolsApiTest, ReturnPadsAreStoredAfterTheirCheck) {
  const std::string gsym = symbols::write_gsym(functions(), kBuildId);
  const std::string pads = symbols::write_symbfile_returnpads({0x1005, 0x1045}, gsym);
  Response r = post("returnpads", pads, encode_file_id(kBuildId));
  ASSERT_EQ(r.status, 200) << r.body;
  gsym::Error error;
  auto file = symbfile::File::parse(stored("returnpads"), symbfile::Kind::kReturnPads, error);
  ASSERT_TRUE(file) << error.message;
  gsym::LookupResult result;
  ASSERT_TRUE(file->lookup_pad(0x1044, result));
  EXPECT_EQ(result.frames.at(0).name, "helper");
  EXPECT_EQ(result.frames.at(0).file, "b.c");
  EXPECT_EQ(result.frames.at(0).dir, "/src");
  EXPECT_FALSE(file->lookup_pad(0x1045, result));
}

TEST_F(SymbolsApiTest, FailuresSayWhatIsWrong) {
  const std::string gsym = symbols::write_gsym(functions(), kBuildId);
  const std::string id = encode_file_id(kBuildId);
  EXPECT_EQ(post("gsym", gsym, id, "", "", 0, "APIKey wrong").status, 401);
  EXPECT_EQ(post("gsym", gsym, id, "", "", 0, "").status, 401);
  // Malformed files: 400 with the format's own words and the byte offset.
  Response bad = post("gsym", "GSYM but not really", id);
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("\"bad-symbols\""), std::string::npos) << bad.body;
  EXPECT_NE(bad.body.find("GSYM byte 0"), std::string::npos) << bad.body;
  std::string cut = symbols::write_symbfile_ranges(functions());
  cut.resize(cut.size() - 3);
  bad = post("ranges", cut, id);
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("symbfile byte"), std::string::npos) << bad.body;
  bad = post("returnpads", symbols::write_symbfile_ranges(functions()), id);  // the wrong kind of records
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("a range record in a returnpads file"), std::string::npos) << bad.body;
  // A GSYM file of another binary.
  bad = post("gsym", gsym, encode_file_id("\x01\x02\x03\x04"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("is not the FileID's build ID"), std::string::npos) << bad.body;
  // Headers.
  EXPECT_EQ(post("gsym", gsym, "").status, 400);
  EXPECT_EQ(post("gsym", gsym, id, "2", "2").status, 400);
  EXPECT_EQ(post("gsym", gsym, id, "0", "0").status, 400);
  EXPECT_EQ(post("gsym", gsym, id, "x", "2").status, 400);
  EXPECT_EQ(post("gsym", gsym, id, "0", "99999999").status, 400);
  EXPECT_EQ(post("elsewhere", gsym, id).status, 404);
  // Parts disagreeing on the number of parts.
  EXPECT_EQ(post("ranges", "symbfile", id, "0", "3").status, 200);
  Response mismatch = post("ranges", "symbfile", id, "1", "4");
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_NE(mismatch.body.find("differs"), std::string::npos) << mismatch.body;
}

TEST_F(SymbolsApiTest, KeysWithoutTheSymbolsPermissionGet403) {
  const std::string gsym = symbols::write_gsym(functions(), kBuildId);
  Response refused = post("gsym", gsym, encode_file_id(kBuildId), "", "", 0, "APIKey reporter");
  EXPECT_EQ(refused.status, 403);
  // The symbfile upload API's failure answer: success false, the status, a uuid the log line repeats, Code and Text.
  EXPECT_TRUE(refused.body.starts_with("{\"success\": false, \"status\": 403, \"uuid\": \"")) << refused.body;
  EXPECT_NE(refused.body.find("\"error\": {\"Code\": \"not-allowed\", \"Text\": \"this API key may not push "
                              "symbols (keys.tsv: symbols)\"}}"),
            std::string::npos)
      << refused.body;
  const std::string uuid = refused.body.substr(refused.body.find("\"uuid\": \"") + 9, 36);
  EXPECT_TRUE(refused.log.starts_with(uuid + " 403 not-allowed app=\"app\"")) << refused.log;
  EXPECT_EQ(stored("gsym"), "");
  // The same file from the key that may push it.
  EXPECT_EQ(post("gsym", gsym, encode_file_id(kBuildId)).status, 200);
  EXPECT_EQ(stored("gsym"), gsym);
}

// Symbols belong to the application whose key pushed them; a stored file is replaced only by a key allowed to.
TEST_F(SymbolsApiTest, AnotherApplicationCannotReplaceSymbolsAndReplacingNeedsItsPermission) {
  const std::string gsym = symbols::write_gsym(functions(), kBuildId);
  std::vector<symbols::Function> renamed = functions();
  renamed[0].name = "<svg/onload=1>";
  const std::string forged = symbols::write_gsym(renamed, kBuildId);
  ASSERT_EQ(post("gsym", gsym, encode_file_id(kBuildId)).status, 200);
  Response other = post("gsym", forged, encode_file_id(kBuildId), "", "", 0, "APIKey intruder");
  ASSERT_EQ(other.status, 200) << other.body;
  EXPECT_NE(other.body.find("\"duplicate\": false"), std::string::npos) << other.body;
  EXPECT_EQ(stored("gsym"), gsym);
  EXPECT_EQ(stored("gsym", "other"), forged);
  Response conflict = post("gsym", forged, encode_file_id(kBuildId));
  EXPECT_EQ(conflict.status, 409);
  EXPECT_NE(conflict.body.find("\"Code\": \"symbols-conflict\""), std::string::npos) << conflict.body;
  EXPECT_EQ(stored("gsym"), gsym);
  Response replaced = post("gsym", forged, encode_file_id(kBuildId), "", "", 0, "APIKey build");
  EXPECT_EQ(replaced.status, 200) << replaced.body;
  EXPECT_EQ(stored("gsym"), forged);
}

TEST_F(SymbolsApiTest, SizeLimitsAnswer413And503) {
  const std::string id = encode_file_id(kBuildId);
  // One body above max_body_bytes.
  EXPECT_EQ(post("gsym", std::string(5000, 'x'), id).status, 413);
  // A file whose parts add up to more than max_symbol_bytes: 413 at the part that crosses, its parts dropped.
  const std::string part(4000, 'x');
  Response r;
  size_t sent = 0;
  for (int i = 0; i < 20 && (sent == 0 || r.status == 200); ++i, ++sent) {
    r = post("ranges", part, id, std::to_string(i), "20");
  }
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(sent, 17u);  // 16 parts of 4000 fit in 64 KiB, the 17th does not
  EXPECT_EQ(collector_->limits().max_symbol_bytes, 64u * 1024);
  // Partial files of several build IDs together above max_pending_symbol_bytes: 503, try later.
  // 100 KiB hold 24 parts of 4000 bytes of two files and their tables of parts (20 entries each), but not a
  // part of a third file with its table as well.
  for (int file = 0; file < 2; ++file) {
    for (int i = 0; i < 12; ++i) {
      std::string other = kBuildId;
      other[0] = static_cast<char>(file);
      EXPECT_EQ(post("ranges", part, encode_file_id(other), std::to_string(i), "20").status, 200);
    }
  }
  Response busy = post("ranges", part, id, "1", "20");
  EXPECT_EQ(busy.status, 503);
  EXPECT_NE(busy.body.find("try again later"), std::string::npos) << busy.body;
  // Stale partial files are dropped: after the timeout there is room again.
  EXPECT_EQ(post("ranges", part, id, "1", "20", 1000).status, 200);
  // Tiny parts of many files: the tables of parts count, and the number of partial files is bounded.
  size_t accepted = 0;
  for (size_t file = 0; file < 2 * SymbolAssembler::kMaxPartialFiles; ++file) {
    std::string other = kBuildId;
    other[0] = static_cast<char>(file);
    other[1] = static_cast<char>(file >> 8);
    if (post("ranges", "x", encode_file_id(other), "0", "100", 2000).status != 200) break;
    ++accepted;
  }
  EXPECT_GT(accepted, 10u);
  EXPECT_LE(accepted * (100 * sizeof(std::optional<std::string>) + 256), 100u * 1024);
}

}  // namespace
}  // namespace sampler::collector
