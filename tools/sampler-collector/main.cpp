// sampler-collector: the collection server for reports from the field, and export of what it stored
// (docs/collection.md).
//
//   sampler-collector serve --listen 127.0.0.1:8080 --database sqlite:reports.db --keys keys.tsv
//   sampler-collector export --database sqlite:reports.db --app wordfreq OUTDIR
//
// The work is in collector/ (request path, HTTP) and store/; this main parses, opens, starts, waits for a signal.
#include <signal.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "collector/console.h"
#include "collector/server.h"
#include "store/files.h"
#include "tool.h"

namespace {

namespace tool = sampler::tool;
namespace collector = sampler::collector;

constexpr tool::Option kServeOptions[] = {
    {"listen", 'l', "HOST:PORT", "address to listen on (port 0: any free port; the bound one is printed)"},
    {"database", 'd', "URL", "sqlite:PATH or postgresql://... (required)"},
    {"keys", 'k', "TSV",
     "API keys: lines APP<TAB>KEY[<TAB>reports,symbols,replace-symbols,read,plans], KEY plain or sha256:HEX; "
     "without the third column a key may upload reports only (required)"},
    {"max-body", 0, "BYTES", "largest request body accepted (default 4194304; larger: 413)"},
    {"max-report", 0, "BYTES", "largest report after gunzip (default 67108864; larger: 413)"},
    {"max-lines", 0, "N", "most lines in a report (default 16777216; more: 413)"},
    {"max-sections", 0, "N", "most samples and timestamps sections in a report (default 131072; more: 413)"},
    {"max-subreports", 0, "N", "most subreports in a report (default 256; more: 413)"},
    {"max-symbols", 0, "BYTES", "largest symbol file, all its parts together (default 536870912; larger: 413)"},
    {"rate", 0, "N", "uploads (MiB of report text) per second per API key, sustained (default 50; more: 429)"},
    {"burst", 0, "N", "uploads (MiB) per API key at once before --rate applies (default 200)"},
    {"timeout", 0, "SECONDS", "close a connection idle this long (default 30)"},
    {"max-connections", 0, "N", "connections served at once (default 256)"},
    {"max-connections-per-client", 0, "N", "connections from one address at once (default 32)"},
    {"request-timeout", 0, "SECONDS", "drop a request not received in full this long after it began (default 60)"},
    {"threads", 0, "N", "request threads (default 32): uploads waiting for a commit share it"},
    {"ready-file", 0, "FILE", "once listening, write HOST:PORT to FILE (written whole, by rename)"},
    {"tls-cert", 0, "PEM", "serve HTTPS with this certificate (chain), PEM; with --tls-key"},
    {"tls-key", 0, "PEM", "the certificate's private key, PEM (unencrypted)"},
    {"site-dir", 0, "DIR", "the console's site information: DIR/APP/ holds APP's *.sites files or binaries"},
    {"console-memory", 0, "MIB", "the console's runs kept between predictor pages, all applications (default 256)"},
    {"console-fresh-ms", 0, "MS",
     "show an application's console page made less than MS ago again, unless runs or symbols of it came here "
     "since (default 5000; 0: each page made for its request)"},
};

constexpr tool::Usage kServeUsage = {
    "sampler-collector serve",
    "--listen HOST:PORT --database URL --keys TSV [OPTIONS]",
    "Receive reports (POST /api/reports), validate them and store them; GET /health and /metrics; the console\n"
    "(GET /ui/) for keys with the read permission.",
    kServeOptions,
    "Prints 'sampler-collector: listening on HOST:PORT' on standard output once it accepts connections, and logs\n"
    "each refused request on standard error with the uuid its answer carries. SIGTERM or SIGINT: finishes the\n"
    "requests under way and exits 0. See sampler-collector(1) and docs/collection.md.\n",
};

constexpr tool::Option kExportOptions[] = {
    {"database", 'd', "URL", "sqlite:PATH or postgresql://... (required)"},
    {"app", 'a', "NAME", "the application whose runs to write (required)"},
    {"version", 0, "V", "only the runs of this version"},
};

constexpr tool::Usage kExportUsage = {
    "sampler-collector export",
    "--database URL --app NAME [--version V] OUTDIR",
    "Write the stored reports of one application into OUTDIR, one file RUNID.report per run.",
    kExportOptions,
    nullptr,
};

constexpr tool::Usage kUsage = {
    "sampler-collector",
    "serve|export OPTIONS...",
    "Collect feedback reports over HTTP into a database, and write them back out as files.",
    std::span<const tool::Option>(),
    "Commands:\n"
    "  serve   --listen HOST:PORT --database sqlite:PATH|postgresql://... --keys TSV\n"
    "  export  --database URL --app NAME OUTDIR\n"
    "'sampler-collector COMMAND --help' describes each.\n",
};

template <typename T>
bool number_option(const tool::CommandLine& command, const char* name, T& value, std::string& error,
                   bool zero_allowed = false) {
  std::optional<std::string> text = command.value(name);
  if (!text) return true;
  T parsed{};
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), parsed);
  if (ec != std::errc() || end != text->data() + text->size() || parsed < T{0} || (parsed == T{0} && !zero_allowed)) {
    error = "--" + std::string(name) + " wants a " + (zero_allowed ? "number >= 0" : "positive number") + ", not '" +
            *text + "'";
    return false;
  }
  value = parsed;
  return true;
}

void report_error(const std::string& file, uint64_t line, const std::string& message) {
  sampler::Diagnostic diagnostic{sampler::Severity::kError, file, line, message};
  std::fprintf(stderr, "%s\n", sampler::format_diagnostic("sampler-collector", diagnostic).c_str());
}

std::mutex log_mutex;

void log_line(const std::string& line) {
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::lock_guard lock(log_mutex);
  std::fprintf(stderr, "sampler-collector: %s %s\n", stamp, line.c_str());
  std::fflush(stderr);
}

int serve(int argc, char** argv) {
  tool::CommandLine command = tool::parse_command_line(kServeUsage, argc, argv);
  if (command.exit_status) return *command.exit_status;
  if (!command.operands.empty()) return tool::usage_error(kServeUsage, "unexpected operand '" + command.operands[0] + "'");
  for (const char* required : {"listen", "database", "keys"}) {
    if (!command.has(required)) return tool::usage_error(kServeUsage, std::string("--") + required + " is required");
  }
  collector::Limits limits;
  std::string error;
  size_t kept_mib = collector::Console::kDefaultKeptBytes >> 20;
  int64_t fresh_ms = static_cast<int64_t>(collector::Console::kDefaultFreshSeconds * 1000);
  if (!number_option(command, "max-body", limits.max_body_bytes, error) ||
      !number_option(command, "max-report", limits.max_report_bytes, error) ||
      !number_option(command, "max-lines", limits.max_report_lines, error) ||
      !number_option(command, "max-sections", limits.max_report_sections, error) ||
      !number_option(command, "max-subreports", limits.max_subreports, error) ||
      !number_option(command, "max-symbols", limits.max_symbol_bytes, error) ||
      !number_option(command, "rate", limits.rate_per_second, error) ||
      !number_option(command, "burst", limits.rate_burst, error) ||
      !number_option(command, "timeout", limits.timeout_seconds, error) ||
      !number_option(command, "max-connections", limits.max_connections, error) ||
      !number_option(command, "max-connections-per-client", limits.max_connections_per_client, error) ||
      !number_option(command, "request-timeout", limits.request_seconds, error) ||
      !number_option(command, "threads", limits.threads, error) ||
      !number_option(command, "console-memory", kept_mib, error) ||
      !number_option(command, "console-fresh-ms", fresh_ms, error, /*zero_allowed=*/true)) {
    return tool::usage_error(kServeUsage, error);
  }
  std::string keys_path = *command.value("keys");
  std::ifstream keys_file(keys_path, std::ios::binary);
  std::stringstream keys_text;
  keys_text << keys_file.rdbuf();
  if (!keys_file) {
    report_error(keys_path, 0, "cannot read the API keys");
    return tool::kExitDataError;
  }
  if (command.has("tls-cert") != command.has("tls-key")) {
    return tool::usage_error(kServeUsage, "--tls-cert and --tls-key go together");
  }
  std::optional<collector::TlsSettings> tls;
  if (command.has("tls-cert")) {
    tls.emplace();
    for (auto [option, text] : {std::pair{"tls-cert", &tls->certificate_pem}, std::pair{"tls-key", &tls->key_pem}}) {
      std::string path = *command.value(option);
      std::ifstream file(path, std::ios::binary);
      std::stringstream bytes;
      bytes << file.rdbuf();
      *text = bytes.str();
      if (!file || text->find("-----BEGIN ") == std::string::npos) {
        report_error(path, 0, std::string("cannot read a PEM ") + (text == &tls->key_pem ? "key" : "certificate"));
        return tool::kExitDataError;
      }
    }
  }
  collector::KeyTable keys;
  if (!keys.load(keys_text.str(), error)) {
    // KeyTable says "line N: MESSAGE"; diagnostics say 'FILE':N: error: MESSAGE.
    size_t colon = error.find(':');
    report_error(keys_path, std::strtoull(error.c_str() + 5, nullptr, 10), error.substr(colon + 2));
    return tool::kExitDataError;
  }
  std::unique_ptr<sampler::store::Store> store = sampler::store::open_store(*command.value("database"), error);
  if (!store) {
    std::fprintf(stderr, "sampler-collector: error: %s\n", error.c_str());
    return tool::kExitDataError;
  }
  // The request threads inherit this mask: only the main thread takes SIGTERM and SIGINT, in sigwait().
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  collector::Collector handler(*store, std::move(keys), limits);
  if (std::optional<std::string> sites = command.value("site-dir")) handler.console().set_site_dir(*sites);
  handler.console().set_kept_bytes(std::min<size_t>(kept_mib, SIZE_MAX >> 20) << 20);
  handler.console().set_fresh_window(static_cast<double>(fresh_ms) / 1000);
  std::unique_ptr<collector::Server> server = collector::Server::start(handler, *command.value("listen"), log_line, error,
                                                                      tls ? &*tls : nullptr);
  if (!server) {
    std::fprintf(stderr, "sampler-collector: error: %s\n", error.c_str());
    return tool::kExitDataError;
  }
  if (std::optional<std::string> ready = command.value("ready-file")) {
    std::string temporary = *ready + ".tmp";
    std::ofstream out(temporary, std::ios::trunc);
    out << server->address() << "\n";
    out.close();
    if (!out || std::rename(temporary.c_str(), ready->c_str()) != 0) {
      std::fprintf(stderr, "sampler-collector: '%s': cannot write the ready file\n", ready->c_str());
      return tool::kExitDataError;
    }
  }
  std::printf("sampler-collector: listening on %s\n", server->address().c_str());
  std::fflush(stdout);
  int received = 0;
  sigwait(&stop_signals, &received);
  server->stop();
  log_line(std::string("stopped by ") + (received == SIGTERM ? "SIGTERM" : "SIGINT"));
  return tool::kExitSuccess;
}

int export_command(int argc, char** argv) {
  tool::CommandLine command = tool::parse_command_line(kExportUsage, argc, argv);
  if (command.exit_status) return *command.exit_status;
  for (const char* required : {"database", "app"}) {
    if (!command.has(required)) return tool::usage_error(kExportUsage, std::string("--") + required + " is required");
  }
  if (command.operands.size() != 1) return tool::usage_error(kExportUsage, "expected one OUTDIR operand");
  std::string error;
  std::unique_ptr<sampler::store::Store> store = sampler::store::open_store(*command.value("database"), error);
  if (!store) {
    std::fprintf(stderr, "sampler-collector: error: %s\n", error.c_str());
    return tool::kExitDataError;
  }
  sampler::store::Query query{*command.value("app"), command.value("version")};
  sampler::Progress progress("sampler-collector: exporting runs");  // on a terminal only
  int64_t written = sampler::store::write_runs(*store, query, command.operands[0], "", error, {},
                                               [&progress](uint64_t bytes) { progress.add(1, bytes); });
  progress.finish();
  if (written < 0) {
    std::fprintf(stderr, "sampler-collector: error: %s\n", error.c_str());
    return tool::kExitDataError;
  }
  return tool::kExitSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view first = argc > 1 ? argv[1] : "";
  if (first == "serve") return serve(argc - 1, argv + 1);
  if (first == "export") {
    // "--version V" selects the runs of a version; a lone --version is the tool's.
    std::string joined;
    std::vector<char*> arguments = tool::join_option_value(argc - 1, argv + 1, "version", joined);
    return export_command(static_cast<int>(arguments.size()) - 1, arguments.data());
  }
  if (first.starts_with("-")) {
    tool::CommandLine command = tool::parse_command_line(kUsage, argc, argv);
    if (command.exit_status) return *command.exit_status;
  }
  return tool::usage_error(kUsage, first.empty() ? "missing command (serve or export)"
                                                 : "unknown command '" + std::string(first) + "' (serve or export)");
}
