// Diagnostics formatting: what every tool prints on stderr.
#include "sections/diagnostics.h"

#include <gtest/gtest.h>

namespace sampler {
namespace {

TEST(FormatDiagnostic, FileAndLine) {
  EXPECT_EQ(format_diagnostic("resolveSamples", {Severity::kError, "app.sites", 12, "no closing tag"}),
            "resolveSamples: 'app.sites':12: error: no closing tag");
}

TEST(FormatDiagnostic, FileWithoutLineIsWarning) {
  EXPECT_EQ(format_diagnostic("extract-section", {Severity::kWarning, "lib.a(x.o)", 0, "no section"}),
            "extract-section: 'lib.a(x.o)': warning: no section");
}

TEST(FormatDiagnostic, NoFile) {
  EXPECT_EQ(format_diagnostic("extract-report", {Severity::kError, "", 0, "no subreport"}),
            "extract-report: error: no subreport");
}

TEST(DiagnosticList, CountsBySeverity) {
  DiagnosticList list;
  list.warning("a", 1, "w");
  list.error("b", 2, "e");
  list.error("c", 0, "e");
  EXPECT_EQ(list.error_count(), 2u);
  EXPECT_EQ(list.warning_count(), 1u);
}

}  // namespace
}  // namespace sampler
