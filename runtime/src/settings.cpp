// Parsing the runtime's environment variables (SPEC section 6). Start-up code: runs once, in the runtime's
// constructor, before the program's threads exist; it may use libc freely (getenv, strtod, open).
#include "settings.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "raw_syscall.h"
#include "sections/core/char_buffer.h"

namespace sampler::runtime {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

constexpr size_t kMaxFileName = 4096;  // PATH_MAX: longer names cannot be opened anyway

}  // namespace

ParseStatus parse_sparsity(const char* text, double& sparsity) {
  static const char kExpected[] = "expected a number >= 1";
  // Only plain decimal notation: strtod alone would also take "inf", "nan", hexadecimal and leading blanks.
  if (text[0] == '\0' || !(is_digit(text[0]) || text[0] == '.')) return {false, kExpected};
  for (const char* p = text; *p != '\0'; ++p) {
    if (!(is_digit(*p) || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-')) {
      return {false, kExpected};
    }
  }
  errno = 0;
  char* end = nullptr;
  double value = strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !(value >= 1.0) || value > 1e300) {
    return {false, kExpected};
  }
  sparsity = value;
  return {true, nullptr};
}

ParseStatus parse_seed(const char* text, uint64_t& seed) {
  static const char kExpected[] = "expected an integer (decimal, 0x hexadecimal or 0 octal) within 64 bits";
  bool negative = text[0] == '-';
  const char* digits = negative ? text + 1 : text;
  // strtoull would accept blanks and a sign of its own: insist on a digit first.
  if (!is_digit(digits[0])) return {false, kExpected};
  errno = 0;
  char* end = nullptr;
  unsigned long long value = strtoull(digits, &end, 0);
  if (end == digits || *end != '\0' || errno == ERANGE) return {false, kExpected};
  if (negative) {
    if (value > (1ull << 63)) return {false, kExpected};
    seed = 0 - static_cast<uint64_t>(value);
  } else {
    seed = value;
  }
  return {true, nullptr};
}

ParseStatus parse_descriptor(const char* text, int& fd) {
  static const char kExpected[] = "expected a descriptor number >= 0";
  if (!is_digit(text[0])) return {false, kExpected};
  long long value = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (!is_digit(*p)) return {false, kExpected};
    value = value * 10 + (*p - '0');
    if (value > INT_MAX) return {false, kExpected};
  }
  fd = static_cast<int>(value);
  return {true, nullptr};
}

ParseStatus expand_file_name(const char* pattern, pid_t pid, char* out, size_t capacity) {
  if (pattern[0] == '\0') return {false, "the file name is empty"};
  CharBuffer name(out, capacity == 0 ? 0 : capacity - 1);
  for (const char* p = pattern; *p != '\0'; ++p) {
    if (*p != '%') {
      name.append(*p);
      continue;
    }
    ++p;
    if (*p == 'p') {
      name.append_decimal(static_cast<uint64_t>(pid));
    } else if (*p == '%') {
      name.append('%');
    } else {
      return {false, "only %p (the process id) and %% may follow a % sign"};
    }
  }
  if (name.overflowed() || capacity == 0) return {false, "the file name is too long"};
  out[name.size()] = '\0';
  return {true, nullptr};
}

namespace {

/// Reads a variable and removes it from the environment, keeping a copy (unsetenv invalidates the original).
/// A value that does not fit the copy is reported as invalid here: `rejected` is set and nullptr returned.
const char* take_variable(const char* name, char* copy, size_t capacity, const char* consequence, bool& rejected) {
  rejected = false;
  const char* value = getenv(name);
  if (value == nullptr) return nullptr;
  size_t length = strlen(value);
  bool fits = length < capacity;
  if (!fits) {
    char start[41];
    memcpy(start, value, sizeof start - 1);
    start[sizeof start - 1] = '\0';
    say(name, ": invalid value '", start, "...' (too long); ", consequence);
    rejected = true;
  } else {
    memcpy(copy, value, length + 1);
  }
  unsetenv(name);
  return fits ? copy : nullptr;
}

bool descriptor_is_writable(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return false;
  int mode = flags & O_ACCMODE;
  return mode == O_WRONLY || mode == O_RDWR;
}

}  // namespace

Settings load_settings() {
  Settings settings;
  static char sparsity_text[256], seed_text[256], file_text[kMaxFileName], fd_text[64];
  bool sparsity_rejected, seed_rejected, file_rejected, fd_rejected;
  const char* sparsity =
      take_variable("SAMPLER_SPARSITY", sparsity_text, sizeof sparsity_text, "sampling is off", sparsity_rejected);
  const char* seed = take_variable("SAMPLER_SEED", seed_text, sizeof seed_text, "sampling is off", seed_rejected);
  const char* file = take_variable("SAMPLER_FILE", file_text, sizeof file_text, "no report", file_rejected);
  const char* fd = take_variable("SAMPLER_REPORT_FD", fd_text, sizeof fd_text, "no report", fd_rejected);
  const char* verbose = getenv("SAMPLER_VERBOSE");
  settings.verbose = verbose != nullptr;
  if (verbose != nullptr) unsetenv("SAMPLER_VERBOSE");

  // Sampling: SAMPLER_SPARSITY, then SAMPLER_SEED; either one invalid turns sampling off.
  bool sampling_ok = !sparsity_rejected && !seed_rejected;
  if (sparsity == nullptr) {
    sampling_ok = false;
    if (settings.verbose && !sparsity_rejected) say("SAMPLER_SPARSITY is not set: sites never sample");
  } else {
    ParseStatus status = parse_sparsity(sparsity, settings.sparsity);
    if (!status.ok) {
      say("SAMPLER_SPARSITY: invalid value '", sparsity, "' (", status.error, "); sampling is off");
      sampling_ok = false;
    }
  }
  if (seed != nullptr) {
    ParseStatus status = parse_seed(seed, settings.seed);
    if (!status.ok) {
      say("SAMPLER_SEED: invalid value '", seed, "' (", status.error, "); sampling is off");
      sampling_ok = false;
    } else {
      settings.seeded = true;
    }
  }
  settings.sampling = sampling_ok;
  if (settings.verbose && sampling_ok) {
    say("sampling one opportunity in ", sparsity, " on average (SAMPLER_SPARSITY), ",
        settings.seeded ? "seeded from SAMPLER_SEED=" : "seeded from the system's entropy",
        settings.seeded ? seed : nullptr);
  }

  // The destination: SAMPLER_REPORT_FD wins over SAMPLER_FILE; either one invalid turns the report off.
  if (fd_rejected || file_rejected) {
    // Already said; no fallback from one destination to the other.
  } else if (fd != nullptr) {
    int descriptor = -1;
    ParseStatus status = parse_descriptor(fd, descriptor);
    if (!status.ok) {
      say("SAMPLER_REPORT_FD: invalid value '", fd, "' (", status.error, "); no report");
    } else if (!descriptor_is_writable(descriptor)) {
      say("SAMPLER_REPORT_FD: descriptor ", fd, " is not open for writing; no report");
    } else {
      // Ours from now on: an exec'd child must not inherit it (its environment no longer names it either).
      fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD) | FD_CLOEXEC);
      settings.report_fd = descriptor;
      if (settings.verbose) say("writing the report to descriptor ", fd, " (SAMPLER_REPORT_FD)");
    }
    if (file != nullptr && settings.verbose) say("SAMPLER_FILE ignored: SAMPLER_REPORT_FD wins");
  } else if (file != nullptr) {
    static char name[kMaxFileName];
    ParseStatus status = expand_file_name(file, getpid(), name, sizeof name);
    if (!status.ok) {
      say("SAMPLER_FILE: invalid value '", file, "' (", status.error, "); no report");
    } else {
      int descriptor = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
      if (descriptor < 0) {
        say("SAMPLER_FILE: cannot create '", name, "': ", strerror(errno), "; no report");
      } else {
        settings.report_fd = descriptor;
        if (settings.verbose) say("writing the report to '", name, "' (SAMPLER_FILE)");
      }
    }
  } else if (settings.verbose) {
    say("neither SAMPLER_FILE nor SAMPLER_REPORT_FD is set: no report");
  }
  return settings;
}

}  // namespace sampler::runtime
