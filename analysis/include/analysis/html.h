// HTML shared by sampler-analyze's page (--html) and the collector's console (/ui/): the one escaping function,
// the one page shell (its stylesheet and its script), and the predictor sections. No external assets: a page
// works from a file:// URL or a server on a machine without network, and reads the same without JavaScript.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "analysis/output.h"

namespace sampler::analysis {

/// Text for HTML element content and attribute values; control characters as visible \xNN (escape_field).
/// Everything that comes from a report, site information or a symbol file goes through it.
std::string html_escape(std::string_view text);

/// The page's one script (sorting the predictor table by column), as the shell embeds it: a server can name it
/// in a Content-Security-Policy by its hash.
extern const std::string_view kSortScript;

/// A whole page: the shell with `title` (plain text, escaped here) and `body` (HTML, as it is).
std::string html_page(std::string_view title, std::string_view body);

/// The predictor sections of a page: the summary, the table with thermometers, the elimination rounds and the
/// crash groups (the analysis's own). `source_dir` as format_html() takes it.
std::string html_predictors(const Analysis& analysis, size_t top, const std::string& source_dir);

}  // namespace sampler::analysis
