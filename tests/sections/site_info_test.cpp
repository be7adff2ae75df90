// Static site information: the scheme table, unit signatures and parse_site_info (sections/site_info.h), on
// The sampler manual's layout, linker NUL padding, CRLF, entities, every error with its line, and binary garbage.
#include "sections/site_info.h"

#include <gtest/gtest.h>

#include "text_test_util.h"

namespace sampler {
namespace {

using testing::render;
using Messages = std::vector<std::string>;

const std::string kUnitA = "0123456789abcdef0123456789abcdef";
const std::string kUnitB = "fedcba9876543210fedcba9876543210";

TEST(FindScheme, SpecTable) {
  struct Row {
    const char* name;
    int static_fields;
    int counters;
    bool is_bounds;
  };
  // docs/formats.md section 2 and the sampler manual, "Site Details".
  const Row rows[] = {
      {"atoms", 2, 2, false},       {"bounds", 3, 2, true},          {"branches", 1, 2, false},
      {"coverage", 0, 1, false},    {"data", 0, 1, false},           {"float-kinds", 3, 9, false},
      {"function-entries", 0, 1, false}, {"g-object-unref", 1, 4, false}, {"returns", 1, 3, false},
      {"scalar-pairs", 5, 3, false},
  };
  for (const Row& row : rows) {
    const SchemeInfo* scheme = find_scheme(row.name);
    ASSERT_NE(scheme, nullptr) << row.name;
    EXPECT_EQ(scheme->name, row.name);
    EXPECT_EQ(scheme->static_fields, row.static_fields) << row.name;
    EXPECT_EQ(scheme->counters, row.counters) << row.name;
    EXPECT_EQ(scheme->is_bounds, row.is_bounds) << row.name;
  }
  for (const char* unknown : {"", "Branches", "branch", "my-scheme", "bounds "}) {
    EXPECT_EQ(find_scheme(unknown), nullptr) << unknown;
  }
}

TEST(IsUnitSignature, Cases) {
  EXPECT_TRUE(is_unit_signature(kUnitA));
  EXPECT_TRUE(is_unit_signature(std::string(32, '0')));
  EXPECT_FALSE(is_unit_signature(""));
  EXPECT_FALSE(is_unit_signature(kUnitA.substr(1)));
  EXPECT_FALSE(is_unit_signature(kUnitA + "0"));
  EXPECT_FALSE(is_unit_signature("0123456789ABCDEF0123456789abcdef"));
  EXPECT_FALSE(is_unit_signature("0123456789abcdeg0123456789abcdef"));
  EXPECT_FALSE(is_unit_signature(" 123456789abcdef0123456789abcdef"));
}

struct Parsed {
  struct Section {
    std::string unit, scheme, body;
    size_t site_count;
    uint64_t line;
    bool operator==(const Section&) const = default;
  };
  std::vector<Section> sections;
  Messages messages;
  bool ok;
};

std::ostream& operator<<(std::ostream& out, const Parsed::Section& s) {
  return out << "{" << s.unit << " " << s.scheme << " @" << s.line << " " << s.site_count << " sites}";
}

Parsed parse(std::string_view text) {
  Parsed parsed;
  DiagnosticList diagnostics;
  parsed.ok = parse_site_info(
      text, "app.sites",
      [&](const SitesSection& s) {
        // Views into the text: never copies.
        EXPECT_TRUE(s.body.empty() || (s.body.data() >= text.data() && s.body.data() + s.body.size() <= text.data() + text.size()));
        parsed.sections.push_back({s.unit, s.scheme, std::string(s.body), s.site_count, s.line});
      },
      diagnostics);
  for (const Diagnostic& d : diagnostics.items) EXPECT_EQ(d.file, "app.sites");
  parsed.messages = render(diagnostics);
  return parsed;
}

// The sampler manual's layout: sites sections, one site per line, tab-separated fields.
const std::string kBranches = "main.c\t12\tmain\t3\targc > 1\n"
                              "<built-in>\t0\tinit\t1\tp != 0\n"  // a site line may start with '<'
                              "util.c\t40\tcopy\t7\tn < size\n";
const std::string kReturns = "main.c\t14\tmain\t4\tfopen\n";

TEST(ParseSiteInfo, SeedLayout) {
  std::string text = "<sites unit=\"" + kUnitA + "\" scheme=\"branches\">\n" + kBranches + "</sites>\n" +
                     "<sites unit=\"" + kUnitB + "\" scheme=\"returns\">\n" + kReturns + "</sites>\n" +
                     "<sites unit=\"" + kUnitB + "\" scheme=\"function-entries\">\n</sites>\n";
  Parsed parsed = parse(text);
  EXPECT_TRUE(parsed.ok);
  EXPECT_TRUE(parsed.messages.empty());
  EXPECT_EQ(parsed.sections, (std::vector<Parsed::Section>{{kUnitA, "branches", kBranches, 3, 1},
                                                           {kUnitB, "returns", kReturns, 1, 6},
                                                           {kUnitB, "function-entries", "", 0, 9}}));
}

TEST(ParseSiteInfo, NulPaddingCrlfAndBlankLines) {
  std::string crlf_body = "a.c\r\n";
  std::string text = std::string("\0\0", 2) + "<sites unit=\"" + kUnitA + "\" scheme=\"branches\">\n" + kBranches +
                     "</sites>\n" + std::string(7, '\0') + "\n\n" + "<sites unit=\"" + kUnitB +
                     "\" scheme=\"returns\">\r\n" + crlf_body + "</sites>\r\n" + std::string(3, '\0');
  Parsed parsed = parse(text);
  EXPECT_TRUE(parsed.ok);
  EXPECT_TRUE(parsed.messages.empty());
  EXPECT_EQ(parsed.sections, (std::vector<Parsed::Section>{{kUnitA, "branches", kBranches, 3, 1},
                                                           {kUnitB, "returns", crlf_body, 1, 8}}));
  // The end tag followed by NUL padding on its own line, and a last end tag without "\n".
  parsed = parse("<sites unit=\"" + kUnitA + "\" scheme=\"x\">\nl\n</sites>" + std::string(4, '\0') + "\n<sites unit=\"" +
                 kUnitA + "\" scheme=\"y\">\n</sites>");
  EXPECT_TRUE(parsed.ok);
  EXPECT_EQ(parsed.sections.size(), 2u);
}

TEST(ParseSiteInfo, AttributesAreXml) {
  struct Case {
    std::string tag;
    std::string scheme;
  };
  const std::vector<Case> cases = {
      {"<sites scheme=\"branches\" unit=\"" + kUnitA + "\">", "branches"},
      {"<sites unit='" + kUnitA + "' scheme='branches'>", "branches"},
      {"<sites  unit = \"" + kUnitA + "\"\tscheme=\"branches\"  >", "branches"},
      {"<sites unit=\"" + kUnitA + "\" scheme=\"my&amp;scheme&#33;&#x3F;\" compiler=\"gcc\">", "my&scheme!?"},
      {"<sites unit=\"&#x30;123456789abcdef0123456789abcdef\" scheme=\"&lt;&gt;&quot;&apos;\">", "<>\"'"},
  };
  for (const Case& c : cases) {
    Parsed parsed = parse(c.tag + "\nsite\n</sites >\n");
    EXPECT_TRUE(parsed.ok) << c.tag;
    ASSERT_EQ(parsed.sections.size(), 1u) << c.tag;
    EXPECT_EQ(parsed.sections[0].unit, kUnitA);
    EXPECT_EQ(parsed.sections[0].scheme, c.scheme);
    EXPECT_EQ(parsed.sections[0].site_count, 1u);
  }
}

TEST(ParseSiteInfo, EmptyElementTagIsAnEmptySection) {
  Parsed parsed = parse("<sites unit=\"" + kUnitA + "\" scheme=\"coverage\"/>\n");
  EXPECT_TRUE(parsed.ok);
  EXPECT_EQ(parsed.sections, (std::vector<Parsed::Section>{{kUnitA, "coverage", "", 0, 1}}));
}

TEST(ParseSiteInfo, ErrorsWithLineNumbers) {
  const std::string open_a = "<sites unit=\"" + kUnitA + "\" scheme=\"branches\">\n";
  const std::string open_b = "<sites unit=\"" + kUnitB + "\" scheme=\"returns\">\n";
  struct Case {
    const char* name;
    std::string input;
    std::vector<std::string> delivered;  // schemes of the sections delivered
    Messages messages;
  };
  const std::vector<Case> cases = {
      {"no closing tag at the end", open_a + "s\ns\n", {}, {"E:1:<sites> section has no closing tag (the input ends at line 3)"}},
      {"no closing tag at the end, no newline", open_a + "s", {}, {"E:1:<sites> section has no closing tag (the input ends at line 2)"}},
      {"no closing tag before the next", open_a + "s\n" + open_b + "t\n</sites>\n", {"returns"},
       {"E:1:<sites> section has no closing tag (the next one starts at line 3)"}},
      {"missing unit", "<sites scheme=\"b\">\ns\n</sites>\n" + open_b + "</sites>\n", {"returns"},
       {"E:1:<sites> tag has no unit attribute"}},
      {"missing scheme", "<sites unit=\"" + kUnitA + "\">\n</sites>\n", {}, {"E:1:<sites> tag has no scheme attribute"}},
      {"empty scheme", "<sites unit=\"" + kUnitA + "\" scheme=\"\">\n</sites>\n", {},
       {"E:1:<sites> tag has an empty scheme attribute"}},
      {"upper-case unit", "\n<sites unit=\"0123456789ABCDEF0123456789ABCDEF\" scheme=\"b\">\n</sites>\n", {},
       {"E:2:unit \"0123456789ABCDEF0123456789ABCDEF\" is not 32 lower-case hexadecimal digits"}},
      {"short unit", "<sites unit=\"abc\" scheme=\"b\">\n</sites>\n", {},
       {"E:1:unit \"abc\" is not 32 lower-case hexadecimal digits"}},
      {"malformed tag", "<sites unit=\"" + kUnitA + "\" scheme=b>\ns\n</sites>\n" + open_b + "</sites>\n", {"returns"},
       {"E:1:malformed tag: Error parsing element attribute at column 55"}},
      {"text before", "junk\nmore\n" + open_a + "</sites>\n", {"branches"},
       {"E:1:text outside a <sites> section (ignored up to the next <sites> tag)"}},
      {"text between", open_a + "</sites>\njunk\n<junk>\n" + open_b + "</sites>\ntail", {"branches", "returns"},
       {"E:3:text outside a <sites> section (ignored up to the next <sites> tag)",
        "E:7:text outside a <sites> section (ignored up to the next <sites> tag)"}},
      {"stray end tag", "</sites>\n" + open_a + "</sites>\n</sites>\n", {"branches"},
       {"E:1:</sites> without a matching <sites> tag", "E:4:</sites> without a matching <sites> tag"}},
      {"end tag with text after it", open_a + "s\n</sites> x\n</sites>\n", {"branches"}, {}},
      // XML forbids both; pugixml let the first scheme win and cut the value at the NUL.
      {"duplicated attribute", "<sites unit=\"" + kUnitA + "\" scheme=\"a\" scheme=\"b\">\ns\n</sites>\n" + open_b +
       "</sites>\n", {"returns"}, {"E:1:malformed tag: duplicate attribute 'scheme' at column 59"}},
      {"reference to NUL", "<sites unit=\"" + kUnitA + "\" scheme=\"a&#x0;b\">\ns\n</sites>\n" + open_b + "</sites>\n",
       {"returns"},
       {"E:1:malformed tag: character reference '&#x0;' at column 57 names a character XML does not allow"}},
      {"references XML allows", "<sites unit=\"" + kUnitA + "\" scheme=\"a&#9;&#xA;&#x10FFFF;b\">\n</sites>\n",
       {"a\t\n\xf4\x8f\xbf\xbf" "b"}, {}},
  };
  for (const Case& c : cases) {
    Parsed parsed = parse(c.input);
    std::vector<std::string> schemes;
    for (const auto& s : parsed.sections) schemes.push_back(s.scheme);
    EXPECT_EQ(schemes, c.delivered) << c.name;
    EXPECT_EQ(parsed.messages, c.messages) << c.name;
    EXPECT_EQ(parsed.ok, c.messages.empty()) << c.name;
  }
}

TEST(ParseSiteInfo, LineCountsAcrossLongSections) {
  std::string body;
  for (int i = 0; i < 100000; ++i) body += "f.c\t" + std::to_string(i) + "\tf\t" + std::to_string(i % 17) + "\tx < y\n";
  std::string text = "<sites unit=\"" + kUnitA + "\" scheme=\"branches\">\n" + body + "</sites>\njunk\n";
  Parsed parsed = parse(text);
  ASSERT_EQ(parsed.sections.size(), 1u);
  EXPECT_EQ(parsed.sections[0].site_count, 100000u);
  EXPECT_TRUE(parsed.sections[0].body == body);
  EXPECT_EQ(parsed.messages, Messages{"E:100003:text outside a <sites> section (ignored up to the next <sites> tag)"});
}

TEST(ParseSiteInfo, TooManyErrorsAreCapped) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += "</sites>\n";
  text += "<sites unit=\"" + kUnitA + "\" scheme=\"b\">\n</sites>\n";
  Parsed parsed = parse(text);
  EXPECT_FALSE(parsed.ok);
  EXPECT_EQ(parsed.messages.size(), 101u);
  EXPECT_EQ(parsed.sections.size(), 1u);  // still read after the cap
}

TEST(ParseSiteInfo, BinaryGarbageNeverCrashes) {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    std::string data = testing::random_bytes(4u << 20, seed);
    for (size_t at = 1000; at + 200 < data.size(); at += 100003) {
      std::string piece = "\n<sites unit=\"" + kUnitA + "\" scheme=\"b\">\n";
      data.replace(at, piece.size(), piece);
    }
    Parsed parsed = parse(data);
    EXPECT_FALSE(parsed.ok);
    EXPECT_LE(parsed.messages.size(), 101u);
  }
}

}  // namespace
}  // namespace sampler
