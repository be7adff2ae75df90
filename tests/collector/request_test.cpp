// The collector's request path without HTTP (collector/request.h): keys, rate, decoding, validation, answers.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>

#include "collector/console.h"
#include "collector/request.h"
#include "sections/diagnostics.h"  // json_string

namespace sampler::collector {
namespace {

std::string gzip(std::string_view text) {
  z_stream stream{};
  deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&stream, text.size()) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

std::string report(std::string_view run_id, std::string_view extra = "") {
  Outcome outcome;
  outcome.run_id = run_id;
  outcome.app = "app";
  outcome.exit_status = 0;
  return std::string(extra) + format_outcome(outcome);
}

TEST(KeyTable, AuthenticatesPlainAndHashedKeys) {
  KeyTable keys;
  std::string error;
  ASSERT_TRUE(keys.load("# keys\nalpha\tk1\n\nbeta\tsha256:" + hash_key_hex("k2") + "\r\n", error)) << error;
  EXPECT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys.authenticate("APIKey k1")->app, "alpha");
  EXPECT_EQ(keys.authenticate("APIKey k2")->app, "beta");
  EXPECT_EQ(keys.authenticate("APIKey k3"), std::nullopt);
  EXPECT_EQ(keys.authenticate("Bearer k1"), std::nullopt);
  EXPECT_EQ(keys.authenticate(""), std::nullopt);
  EXPECT_EQ(keys.authenticate("APIKey sha256:" + hash_key_hex("k2")), std::nullopt);  // the hash is not the key
}

TEST(KeyTable, ReportsOnlyUnlessTheLineSaysWhatTheKeyMayUpload) {
  KeyTable keys;
  std::string error;
  ASSERT_TRUE(keys.load("a\tplain\nb\tboth\treports,symbols\nc\tbuild\tsymbols\nd\tsha256:" +
                            hash_key_hex("hashed") +
                            "\tsymbols,reports\r\ne\tr\treports\nf\tmay-replace\treplace-symbols\n",
                        error))
      << error;
  auto expect = [&](std::string_view key, std::string_view app, bool reports, bool symbols, bool replace = false) {
    const auto holder = keys.authenticate("APIKey " + std::string(key));
    ASSERT_TRUE(holder.has_value()) << key;
    EXPECT_EQ(holder->app, app) << key;
    EXPECT_EQ(holder->reports, reports) << key;
    EXPECT_EQ(holder->symbols, symbols) << key;
    EXPECT_EQ(holder->replace_symbols, replace) << key;
    EXPECT_EQ(holder->key_hash, hash_key_hex(key)) << key;
  };
  expect("plain", "a", true, false);
  expect("both", "b", true, true);
  expect("build", "c", false, true);
  expect("hashed", "d", true, true);
  expect("r", "e", true, false);
  expect("may-replace", "f", false, true, true);
  EXPECT_EQ(keys.authenticate("APIKey build\tsymbols"), std::nullopt);  // the column is not part of the key
  EXPECT_FALSE(KeyTable().load("a\tk\tsymbol\n", error));
  EXPECT_EQ(error, "line 1: unknown permission 'symbol' after the key (expected reports, symbols, replace-symbols, "
                   "read, plans, or several: reports,symbols)");
  EXPECT_FALSE(KeyTable().load("a\tk\t\n", error));
  EXPECT_EQ(error, "line 1: unknown permission '' after the key (expected reports, symbols, replace-symbols, read, "
                   "plans, or several: reports,symbols)");
  EXPECT_FALSE(KeyTable().load("a\tk\treports,\n", error));
  EXPECT_FALSE(KeyTable().load("a\t\tsymbols\n", error));
  EXPECT_EQ(error, "line 1: expected APP<TAB>KEY");
}

// `read` (the console) is a permission of its own; one key on several lines reads each line's application, and
// holders() finds only the lines that hold the key.
TEST(KeyTable, ReadPermissionPerLine) {
  KeyTable keys;
  std::string error;
  ASSERT_TRUE(keys.load("alpha\tviewer\tread\nbeta\tviewer\treports,read\ngamma\tviewer\nbeta\tother\tread\n", error))
      << error;
  std::vector<KeyTable::Holder> found = keys.holders("viewer");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].app, "alpha");
  EXPECT_TRUE(found[0].read);
  EXPECT_FALSE(found[0].reports);
  EXPECT_EQ(found[1].app, "beta");
  EXPECT_TRUE(found[1].read && found[1].reports);
  EXPECT_EQ(found[2].app, "gamma");
  EXPECT_FALSE(found[2].read);  // the default is reports only
  EXPECT_TRUE(keys.holders("viewe").empty());
  EXPECT_TRUE(keys.holders("").empty());
  EXPECT_EQ(keys.holders("other").size(), 1u);
}

TEST(KeyTable, RejectsMalformedLines) {
  std::string error;
  EXPECT_FALSE(KeyTable().load("alpha k1\n", error));
  EXPECT_EQ(error, "line 1: expected APP<TAB>KEY");
  EXPECT_FALSE(KeyTable().load("ok\tk\n\tk1\n", error));
  EXPECT_EQ(error, "line 2: expected APP<TAB>KEY");
  EXPECT_FALSE(KeyTable().load("a\tsha256:abc\n", error));
  EXPECT_FALSE(KeyTable().load("a\tsha256:" + std::string(64, 'g') + "\n", error));
}

TEST(RateLimiter, AllowsTheBurstThenTheRate) {
  RateLimiter rate(2, 3);
  EXPECT_TRUE(rate.allow("a", 100));
  EXPECT_TRUE(rate.allow("a", 100));
  EXPECT_TRUE(rate.allow("a", 100));
  EXPECT_FALSE(rate.allow("a", 100));
  EXPECT_TRUE(rate.allow("b", 100));  // per key
  EXPECT_TRUE(rate.allow("a", 100.5));  // one token back after half a second at 2/s
  EXPECT_FALSE(rate.allow("a", 100.5));
}

TEST(DecodeBody, PlainGzipAndLimits) {
  std::string text, error;
  EXPECT_EQ(decode_body("plain\n", "", 100, text, error), DecodeStatus::kOk);
  EXPECT_EQ(text, "plain\n");
  EXPECT_EQ(decode_body(gzip("zipped\n"), "", 100, text, error), DecodeStatus::kOk);  // by magic
  EXPECT_EQ(text, "zipped\n");
  EXPECT_EQ(decode_body(gzip("a") + gzip("b"), "gzip", 100, text, error), DecodeStatus::kOk);
  EXPECT_EQ(text, "ab");
  // A bomb: 10 MB of zeros in about 10 KB stops at the limit.
  std::string bomb = gzip(std::string(10u << 20, '\0'));
  EXPECT_LT(bomb.size(), 20000u);
  EXPECT_EQ(decode_body(bomb, "gzip", 1u << 20, text, error), DecodeStatus::kTooLarge);
  EXPECT_NE(error.find("decompresses to more than 1048576"), std::string::npos) << error;
  EXPECT_EQ(decode_body(std::string(101, 'x'), "", 100, text, error), DecodeStatus::kTooLarge);
  std::string cut = gzip(std::string(5000, 'y'));
  cut.resize(cut.size() / 2);
  EXPECT_EQ(decode_body(cut, "gzip", 100000, text, error), DecodeStatus::kCorrupt);
  EXPECT_EQ(decode_body("not gzip", "gzip", 100, text, error), DecodeStatus::kCorrupt);
  EXPECT_EQ(decode_body("x", "br", 100, text, error), DecodeStatus::kCorrupt);
}

// Only a body that is exactly one gzip member may be stored as it came (store::Run::gzip_body).
TEST(DecodeBody, SaysWhenTheBodyIsOneGzipMember) {
  std::string text, error;
  bool one = false;
  EXPECT_EQ(decode_body(gzip("zipped\n"), "gzip", 100, text, error, &one), DecodeStatus::kOk);
  EXPECT_TRUE(one);
  EXPECT_EQ(decode_body(gzip("a") + gzip("b"), "gzip", 100, text, error, &one), DecodeStatus::kOk);
  EXPECT_FALSE(one);
  EXPECT_EQ(decode_body("plain\n", "", 100, text, error, &one), DecodeStatus::kOk);
  EXPECT_FALSE(one);
  EXPECT_EQ(decode_body(gzip(std::string(200, 'z')), "gzip", 100, text, error, &one), DecodeStatus::kTooLarge);
  EXPECT_FALSE(one);
  // What the store keeps reads back as the text.
  std::string zipped = gzip("kept as sent\n"), back;
  ASSERT_TRUE(store::decompress_body(zipped, 13, back));
  EXPECT_EQ(back, "kept as sent\n");
  EXPECT_FALSE(store::decompress_body(zipped, 12, back));
  EXPECT_FALSE(store::decompress_body(zipped + "x", 13, back));
}

// A report cut short at its end is normal (docs/formats.md, "Cut short"): the formats library warns and uses what
// is there, so the collector takes it too; a subreport left open before the next one is an error in both.
TEST(ValidateReport, AcceptsWhatTheFormatsLibraryAccepts) {
  ValidReport valid;
  std::string error;
  const std::string cut = "<report id=\"samples\">\n<samples unit=\"0123456789abcdef0123456789abcdef\" "
                          "scheme=\"branches\">\n1\t2\n3\t";
  EXPECT_TRUE(validate_report(report("r1") + cut, valid, error)) << error;
  EXPECT_FALSE(validate_report(report("r1", cut + "\n"), valid, error));
  EXPECT_NE(error.find("has no closing tag before this <report>"), std::string::npos) << error;
}

TEST(ValidateReport, AcceptsAReportWithItsOutcome) {
  ValidReport valid;
  std::string error;
  std::string text = report("r1", "<report id=\"samples\">\n<samples unit=\"0123456789abcdef0123456789abcdef\" "
                                   "scheme=\"branches\">\n1\t2\n</samples>\n</report>\n");
  ASSERT_TRUE(validate_report(text, valid, error)) << error;
  EXPECT_EQ(valid.outcome.run_id, "r1");
  EXPECT_EQ(valid.outcome.exit_status, 0);
  EXPECT_EQ(valid.crash_signature, "");
}

TEST(ValidateReport, SaysWhatIsWrongAtWhichLine) {
  ValidReport valid;
  std::string error;
  EXPECT_FALSE(validate_report("<report id=\"samples\">\n</report>\n", valid, error));
  EXPECT_EQ(error, "line 1: no outcome subreport (sampler-run adds one; it holds the run-id)");
  EXPECT_FALSE(validate_report(report("r1") + "stray text\n", valid, error));
  EXPECT_EQ(error.substr(0, 8), "line 8: ") << error;
  EXPECT_FALSE(validate_report("<report id=\"outcome\">\nrun-id\tbad/id\n</report>\n", valid, error));
  EXPECT_EQ(error.substr(0, 7), "line 2:") << error;
  EXPECT_FALSE(validate_report("<report id=\"outcome\">\napp\tx\n</report>\n", valid, error));
  EXPECT_EQ(error, "line 1: the outcome subreport has no run-id");
  EXPECT_FALSE(validate_report("<report id=\"outcome\">\nrun-id\tx\nexit-status\t300\n</report>\n", valid, error));
  EXPECT_EQ(error, "line 3: exit-status is not 0 to 255");
  EXPECT_FALSE(validate_report(report("r1") + report("r2"), valid, error));
  EXPECT_NE(error.find("a second outcome"), std::string::npos);
  EXPECT_FALSE(validate_report(report("r1", "<report id=\"samples\">\n<samples unit=\"xyz\" scheme=\"b\">\n"
                                            "</samples>\n</report>\n"), valid, error));
  EXPECT_EQ(error.substr(0, 7), "line 2:") << error;
  EXPECT_FALSE(validate_report(report("r1") + std::string("\0", 1), valid, error));
}

// An interim report (a run still going): an interim subreport and an outcome without an end. The same subreport
// in a report whose outcome has its end (a program's own sampler_write_report() left in its final report) is final.
TEST(ValidateReport, TellsInterimReportsFromFinalOnes) {
  ValidReport valid;
  std::string error;
  Outcome going;
  going.run_id = "r1";
  ASSERT_TRUE(validate_report(format_interim(7) + format_outcome(going), valid, error)) << error;
  EXPECT_EQ(valid.interim_sequence, 7);
  ASSERT_TRUE(validate_report(report("r1", format_interim(7)), valid, error)) << error;
  EXPECT_FALSE(valid.interim_sequence.has_value());
  ASSERT_TRUE(validate_report(format_outcome(going), valid, error)) << error;
  EXPECT_FALSE(valid.interim_sequence.has_value());
  EXPECT_FALSE(validate_report("<report id=\"interim\">\nsequence\t0\n</report>\n" + format_outcome(going), valid,
                               error));
  EXPECT_EQ(error, "line 2: the interim sequence is not a number from 1 to 2^63-1");
  EXPECT_FALSE(validate_report("<report id=\"interim\">\n</report>\n" + format_outcome(going), valid, error));
  EXPECT_EQ(error, "line 1: the interim subreport has no sequence");
}

TEST(ValidateReport, CrashSignatureIgnoresLoadAddresses) {
  auto crash = [](std::string_view base, std::string_view cbf) {
    return report("r", "<report id=\"main-backtrace\">\n{{{reset}}}\n{{{module:0:prog:elf:abcd}}}\n"
                       "{{{mmap:" + std::string(base) + ":0x1000:load:0:rx:0x0}}}\nsignal:11:SIGSEGV:0x0\ncbf:" +
                       std::string(cbf) + "\n</report>\n");
  };
  ValidReport a, b, c;
  std::string error;
  ASSERT_TRUE(validate_report(crash("0x5000", "AAAA"), a, error)) << error;
  ASSERT_TRUE(validate_report(crash("0x7000", "AAAA"), b, error)) << error;
  ASSERT_TRUE(validate_report(crash("0x5000", "BBBB"), c, error)) << error;
  EXPECT_EQ(a.crash_signature.substr(0, 8), "SIGSEGV:");
  EXPECT_EQ(a.crash_signature, b.crash_signature);
  EXPECT_NE(a.crash_signature, c.crash_signature);
}

TEST(Outcome, RoundTrips) {
  Outcome o;
  o.run_id = "0123abcd";
  o.app = "wordfreq";
  o.version = "1.2\tbeta";  // a tab would break the line: it becomes a space
  o.signal = 6;
  o.wall_seconds = 1.5;
  o.cpu_seconds = 0.25;
  o.sparsity = "100";
  o.seed = "42";
  o.build_ids = {{"/usr/bin/wordfreq", "abcdef"}};
  std::string text = format_outcome(o);
  std::string body = text.substr(text.find('\n') + 1);
  body.resize(body.rfind("</report>"));
  Outcome back;
  std::string error;
  ASSERT_TRUE(parse_outcome(body, 2, back, error)) << error;
  EXPECT_EQ(back.run_id, o.run_id);
  EXPECT_EQ(back.version, "1.2 beta");
  EXPECT_EQ(back.signal, 6);
  EXPECT_FALSE(back.exit_status.has_value());
  EXPECT_DOUBLE_EQ(back.wall_seconds, 1.5);
  EXPECT_EQ(back.sparsity, "100");
  ASSERT_EQ(back.build_ids.size(), 1u);
  EXPECT_EQ(back.build_ids[0].first, "/usr/bin/wordfreq");
  EXPECT_EQ(back.build_ids[0].second, "abcdef");
}

TEST(Json, EscapesControlAndNonAsciiBytes) {
  EXPECT_EQ(json_string("a\"b\\c\n\x1b\xff"), "\"a\\\"b\\\\c\\u000a\\u001b\\u00ff\"");
  std::string uuid = new_uuid();
  EXPECT_EQ(uuid.size(), 36u);
  EXPECT_EQ(uuid[14], '4');
  EXPECT_NE(uuid, new_uuid());
}

class CollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("collector-test-" + new_uuid());
    std::filesystem::create_directories(dir_);
    std::string error;
    store_ = store::open_store("sqlite:" + (dir_ / "r.db").string(), error);
    ASSERT_NE(store_, nullptr) << error;
    KeyTable keys;
    ASSERT_TRUE(keys.load("app\tgood\n", error));
    Limits limits;
    limits.rate_per_second = 1;
    limits.rate_burst = 3;
    collector_ = std::make_unique<Collector>(*store_, std::move(keys), limits);
  }
  void TearDown() override {
    collector_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  Response post(std::string_view body, std::string_view key = "APIKey good", double now = 0) {
    Request request;
    request.method = "POST";
    request.path = "/api/reports";
    request.authorization = key;
    request.content_type = "text/plain";
    request.body = body;
    return collector_->handle(request, now);
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Collector> collector_;
};

TEST_F(CollectorTest, KeysForSymbolsOnlyMayNotUploadReports) {
  KeyTable keys;
  std::string error;
  ASSERT_TRUE(keys.load("app\tbuild\tsymbols\n", error)) << error;
  Collector collector(*store_, std::move(keys), Limits());
  Request request;
  request.method = "POST";
  request.path = "/api/reports";
  request.authorization = "APIKey build";
  request.content_type = "text/plain";
  const std::string body = report("run1");
  request.body = body;
  Response refused = collector.handle(request, 0);
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body.find("\"Code\": \"not-allowed\", \"Text\": \"this API key may not upload reports"),
            std::string::npos)
      << refused.body;
  EXPECT_EQ(store_->count(error), 0);
}

// Sampling plans through the request path: only a key with `plans` uploads one, checked whole; any key of the
// application reads it; the answer to a report names its release's current plan.
TEST_F(CollectorTest, PlansUploadedByPlansKeysOnlyAndNamedInReportAnswers) {
  KeyTable keys;
  std::string error;
  ASSERT_TRUE(keys.load("app\tuser\napp\tplanner\tplans\nelse\tstranger\treports,plans\n", error)) << error;
  Collector collector(*store_, std::move(keys), Limits());
  auto call = [&](std::string_view method, std::string_view path, std::string_view key, std::string_view body,
                  std::optional<std::string_view> version) {
    Request request;
    request.method = method;
    request.path = path;
    request.authorization = key;
    request.body = body;
    request.version = version;
    return collector.handle(request, 0);
  };
  const std::string plan = "sampler-plan\t1\nid\tp-1\n0123456789abcdef0123456789abcdef\tbranches\t7\t0.25\n";
  Response refused = call("POST", "/api/plans", "APIKey user", plan, "2.0");
  EXPECT_EQ(refused.status, 403) << refused.body;
  Response stored = call("POST", "/api/plans", "APIKey planner", plan, "2.0");
  EXPECT_EQ(stored.status, 200) << stored.body;
  EXPECT_EQ(stored.body,
            "{\"success\": true, \"status\": 200, \"plan\": \"p-1\", \"version\": \"2.0\", \"entries\": 1}\n");
  const std::string repeated = plan + "0123456789abcdef0123456789abcdef\tbranches\t7\t1\n";
  Response bad = call("POST", "/api/plans", "APIKey planner", repeated, "2.0");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("\"Code\": \"bad-plan\", \"Text\": \"line 4: the same unit, scheme and site as line 3\""),
            std::string::npos)
      << bad.body;
  Response fetched = call("GET", "/api/plans/p-1", "APIKey user", "", std::nullopt);
  EXPECT_EQ(fetched.status, 200);
  EXPECT_EQ(fetched.body, plan);
  EXPECT_EQ(call("GET", "/api/plans/p-1", "APIKey stranger", "", std::nullopt).status, 404);
  // A report of release 2.0 is answered with p-1; one of another release with null.
  Outcome outcome;
  outcome.run_id = "run-2";
  outcome.app = "app";
  outcome.version = "2.0";
  outcome.exit_status = 0;
  Response answer = call("POST", "/api/reports", "APIKey user", format_outcome(outcome), std::nullopt);
  EXPECT_EQ(answer.status, 200) << answer.body;
  EXPECT_NE(answer.body.find("\"plan\": \"p-1\"}"), std::string::npos) << answer.body;
  answer = call("POST", "/api/reports", "APIKey user", report("run-1"), std::nullopt);
  EXPECT_NE(answer.body.find("\"plan\": null}"), std::string::npos) << answer.body;
}

// The console's login sets the key's cookie (Secure over TLS), and the cookie then opens the pages; a key
// without `read` is refused and gets no cookie. percent_encode/decode carry any key through the cookie.
TEST_F(CollectorTest, ConsoleLoginSetsTheKeysCookie) {
  KeyTable keys;
  std::string error;
  ASSERT_TRUE(keys.load("app\tviewer; =%\tread\napp\tuser\n", error)) << error;
  Collector collector(*store_, std::move(keys), Limits());
  Request request;
  request.method = "POST";
  request.path = "/ui/login";
  request.secure = true;
  const std::string form = "key=" + percent_encode("viewer; =%");
  request.body = form;
  Response signed_in = collector.handle(request, 0);
  EXPECT_EQ(signed_in.status, 303);
  std::string cookie;
  for (const auto& [name, value] : signed_in.headers)
    if (name == "Set-Cookie") cookie = value;
  EXPECT_EQ(cookie, "sampler_key=viewer%3B%20%3D%25; Path=/ui/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure");
  Request page;
  page.method = "GET";
  page.path = "/ui/";
  const std::string sent = cookie.substr(0, cookie.find(';'));
  page.cookie = sent;
  Response list = collector.handle(page, 0);
  EXPECT_EQ(list.status, 200);
  EXPECT_NE(list.body.find("<a href=\"/ui/app/app/\">app</a>"), std::string::npos) << list.body;
  page.cookie = "";
  EXPECT_EQ(collector.handle(page, 0).status, 401);
  page.authorization = "APIKey user";
  EXPECT_EQ(collector.handle(page, 0).status, 403);
  request.body = "key=user";
  Response refused = collector.handle(request, 0);
  EXPECT_EQ(refused.status, 403);
  for (const auto& header : refused.headers) EXPECT_NE(header.first, "Set-Cookie");
  EXPECT_EQ(percent_decode("a+b%2Fc%zz%4", true), "a b/c%zz%4");
}

// The console's pages served again within the window (Console::set_fresh_window): a run stored by another
// collector over the same database shows once the window ends (FreshPages' own test), one stored by this
// collector on its next page.
TEST_F(CollectorTest, ConsolePagesServedAgainUntilARunIsStoredHere) {
  std::string error;
  auto collector_with = [&] {
    KeyTable keys;
    EXPECT_TRUE(keys.load("app\tuser\napp\tviewer\tread\n", error)) << error;
    return std::make_unique<Collector>(*store_, std::move(keys), Limits());
  };
  std::unique_ptr<Collector> here = collector_with(), other = collector_with();
  here->console().set_fresh_window(3600);  // longer than the test: only a store here ends the page
  auto call = [](Collector& collector, std::string_view method, std::string_view path, std::string_view key,
                 std::string_view body) {
    Request request;
    request.method = method;
    request.path = path;
    request.authorization = key;
    request.content_type = "text/plain";
    request.body = body;
    return collector.handle(request, 0);
  };
  const std::string first = report("run-first"), second = report("run-second"), third = report("run-third");
  ASSERT_EQ(call(*here, "POST", "/api/reports", "APIKey user", first).status, 200);
  const Response made = call(*here, "GET", "/ui/app/app/", "APIKey viewer", "");
  ASSERT_EQ(made.status, 200) << made.body;
  EXPECT_NE(made.body.find("run-first"), std::string::npos) << made.body;
  EXPECT_NE(made.body.find("<p id=\"made\">Made "), std::string::npos) << made.body;
  ASSERT_EQ(call(*other, "POST", "/api/reports", "APIKey user", second).status, 200);
  EXPECT_EQ(call(*here, "GET", "/ui/app/app/", "APIKey viewer", "").body, made.body) << "made again";
  EXPECT_EQ(call(*other, "GET", "/ui/app/app/", "APIKey viewer", "").body.find("<p id=\"made\">"), std::string::npos)
      << "a page said when it was made with no window";
  ASSERT_EQ(call(*here, "POST", "/api/reports", "APIKey user", third).status, 200);
  const Response again = call(*here, "GET", "/ui/app/app/", "APIKey viewer", "");
  EXPECT_NE(again.body.find("run-second"), std::string::npos) << again.body;
  EXPECT_NE(again.body.find("run-third"), std::string::npos) << again.body;
  // The access is checked first: a key without read gets no kept page.
  EXPECT_EQ(call(*here, "GET", "/ui/app/app/", "APIKey user", "").status, 403);
}

TEST_F(CollectorTest, StoresOnceAndAnswersInJson) {
  Response first = post(report("run1"));
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.body,
            "{\"success\": true, \"status\": 200, \"id\": \"run1\", \"duplicate\": false, \"plan\": null}\n");
  EXPECT_EQ(first.log, "");
  Response again = post(gzip(report("run1")), "APIKey good", 10);
  EXPECT_EQ(again.status, 200);
  EXPECT_NE(again.body.find("\"duplicate\": true"), std::string::npos);
  std::string error;
  EXPECT_EQ(store_->count(error), 1);
}

// A run's interim reports: the collector keeps the latest, acknowledges older ones as duplicates, and the final
// report replaces them (docs/collection.md, "Long-running programs").
TEST_F(CollectorTest, KeepsTheLatestReportOfARun) {
  Outcome going;
  going.run_id = "run1";
  going.app = "app";
  auto interim = [&](uint64_t sequence) { return format_interim(sequence) + format_outcome(going); };
  auto stored = [&] {
    std::string error, body;
    int64_t sequence = -1;
    EXPECT_TRUE(store_->for_each({"app", std::nullopt}, [&](const store::Run& run) {
      body = run.body;
      sequence = run.interim_sequence.value_or(0);
      return true;
    }, error)) << error;
    return std::to_string(sequence) + (body == interim(2) ? " interim 2" : body == report("run1") ? " final" : " other");
  };
  EXPECT_NE(post(interim(2), "APIKey good", 10).body.find("\"duplicate\": false"), std::string::npos);
  EXPECT_NE(post(interim(1), "APIKey good", 20).body.find("\"duplicate\": true"), std::string::npos);
  EXPECT_EQ(stored(), "2 interim 2");
  EXPECT_NE(post(report("run1"), "APIKey good", 30).body.find("\"duplicate\": false"), std::string::npos);
  EXPECT_EQ(stored(), "0 final");
  EXPECT_NE(post(interim(3), "APIKey good", 40).body.find("\"duplicate\": true"), std::string::npos);
  std::string error;
  EXPECT_EQ(store_->count(error), 1);
}

TEST_F(CollectorTest, FailuresCarryAUuidThatTheLogCarries) {
  Response bad = post(report("run1"), "APIKey wrong");
  EXPECT_EQ(bad.status, 401);
  size_t at = bad.body.find("\"uuid\": \"");
  ASSERT_NE(at, std::string::npos);
  std::string uuid = bad.body.substr(at + 9, 36);
  EXPECT_EQ(bad.log.substr(0, 36), uuid);
  EXPECT_EQ(post("junk\n").status, 400);
  EXPECT_EQ(post(report("r2"), "APIKey good", 0).status, 200);
  EXPECT_EQ(post(report("r3"), "APIKey good", 0).status, 200);
  EXPECT_EQ(post(report("r4"), "APIKey good", 0).status, 429);  // burst of 3 spent (the junk counted, not the 401)
  Request get;
  get.method = "GET";
  get.path = "/elsewhere";
  EXPECT_EQ(collector_->handle(get, 0).status, 404);
  get.path = "/api/reports";
  EXPECT_EQ(collector_->handle(get, 0).status, 405);
  get.path = "/health";
  EXPECT_EQ(collector_->handle(get, 0).status, 200);
  get.path = "/metrics";
  Response metrics = collector_->handle(get, 0);
  EXPECT_NE(metrics.body.find("sampler_reports_stored_total 2\n"), std::string::npos) << metrics.body;
}

TEST_F(CollectorTest, WrongContentTypeAndTooLargeBodies) {
  Request request;
  request.method = "POST";
  request.path = "/api/reports";
  request.authorization = "APIKey good";
  request.content_type = "application/x-www-form-urlencoded";
  request.body = report("x");
  EXPECT_EQ(collector_->handle(request, 0).status, 415);
  request.content_type = "";
  request.body_too_large = true;
  EXPECT_EQ(collector_->handle(request, 0).status, 413);
}

// The bucket pays for the work an upload cost, not one token each: a report that decompresses to several typical
// reports' worth of text (legal, within every limit) spends as many, so a key's expensive uploads reach 429 sooner
// than its cheap ones, and a rejected bomb pays for the decompressing it caused.
TEST_F(CollectorTest, ExpensiveUploadsDrainTheKeysBucketSooner) {
  // Cheap: the burst of 3 is three uploads.
  EXPECT_EQ(post(report("cheap1"), "APIKey good", 0).status, 200);
  EXPECT_EQ(post(report("cheap2"), "APIKey good", 0).status, 200);
  EXPECT_EQ(post(report("cheap3"), "APIKey good", 0).status, 200);
  EXPECT_EQ(post(report("cheap4"), "APIKey good", 0).status, 429);
  // Refilled (3 s at 1/s): one report of 2.5 units of text spends the whole burst.
  const size_t unit = collector_->limits().rate_unit_bytes;
  std::string padding = "<report id=\"padding\">\n";
  while (padding.size() < unit * 5 / 2) padding += std::string(99, 'x') + "\n";
  padding += "</report>\n";
  EXPECT_EQ(post(gzip(report("costly1", padding)), "APIKey good", 10).status, 200);
  EXPECT_EQ(post(report("cheap5"), "APIKey good", 10).status, 429);
  // 3 s later the key has its burst again.
  EXPECT_EQ(post(report("cheap6"), "APIKey good", 13).status, 200);
  // A bomb refused after decompressing the limit pays for that limit (64 units by default).
  EXPECT_EQ(post(gzip(std::string(collector_->limits().max_report_bytes + 1, '\n')), "APIKey good", 100).status, 413);
  EXPECT_EQ(post(report("cheap7"), "APIKey good", 100 + 30).status, 429);
  std::string error;
  EXPECT_EQ(store_->count(error), 5);
}

}  // namespace
}  // namespace sampler::collector
