// Parsing the runtime's environment variables (docs/instrumenting.md section 2). Start-up code: runs once, in the
// runtime's constructor, before the program's threads exist; it may use libc freely (getenv, strtod, open).
#include "settings.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "plan.h"
#include "raw_syscall.h"
#include "shared_counters.h"
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

ParseStatus parse_interval(const char* text, uint32_t& seconds) {
  static const char kExpected[] = "expected a whole number of seconds from 1 to 1000000000";
  if (!is_digit(text[0])) return {false, kExpected};
  uint64_t value = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (!is_digit(*p)) return {false, kExpected};
    value = value * 10 + static_cast<uint64_t>(*p - '0');
    if (value > 1000000000) return {false, kExpected};
  }
  if (value == 0) return {false, kExpected};
  seconds = static_cast<uint32_t>(value);
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

ParseStatus map_shared_descriptor(int fd, unsigned char*& base, uint64_t& size) {
  struct stat status {};
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fstat(fd, &status) != 0) return {false, "the descriptor is not open"};
  if ((flags & O_ACCMODE) != O_RDWR || !S_ISREG(status.st_mode)) {
    return {false, "expected a regular file (a memfd) open for reading and writing"};
  }
  if (!shared_size_in_bounds(status.st_size)) {
    return {false, "expected a file of one page to 1 GiB"};
  }
  void* mapping = mmap(nullptr, static_cast<size_t>(status.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapping == MAP_FAILED) return {false, "the file cannot be mapped"};
  base = static_cast<unsigned char*>(mapping);
  size = static_cast<uint64_t>(status.st_size);
  return {true, nullptr};
}

ParseStatus expand_file_name(const char* pattern, const FileNameValues& values, char* out, size_t capacity,
                             bool* continuous) {
  if (pattern[0] == '\0') return {false, "the file name is empty"};
  CharBuffer name(out, capacity == 0 ? 0 : capacity - 1);
  for (const char* p = pattern; *p != '\0'; ++p) {
    if (*p != '%') {
      name.append(*p);
      continue;
    }
    ++p;
    if (*p == 'p') {
      name.append_decimal(static_cast<uint64_t>(values.pid));
    } else if (*p == 'h') {
      for (const char* h = values.host; *h != '\0'; ++h) name.append(*h == '/' ? '_' : *h);
    } else if (*p == 't') {
      name.append_decimal(values.seconds);
    } else if (*p == '%') {
      name.append('%');
    } else if (*p == 'c') {
      if (continuous != nullptr) *continuous = true;
    } else {
      return {false, "only %p (the process id), %h (the host name), %t (seconds since the epoch), %c (counters "
                     "in a file mapping) and %% may follow a % sign"};
    }
  }
  if (name.overflowed() || capacity == 0) return {false, "the file name is too long"};
  if (name.size() == 0) return {false, "the file name is empty"};  // "%c" alone
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

/// Moves a descriptor of the runtime's own above the standard streams (a program that closed stdin expects its
/// next open() to give 0): returns a close-on-exec duplicate >= 3 and closes `fd`, or `fd` itself if it is >= 3.
int above_standard_streams(int fd) {
  if (fd >= 3) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0) return fd;
  close(fd);
  return moved;
}

/// Opens the report file `name` by the creation rule of settings.h, or says why not and returns -1 (`verbose`:
/// SAMPLER_VERBOSE, read but not yet in effect). `regular`: set when it is a regular file. `access`: O_WRONLY for
/// the report, O_RDWR for the counters file (mapped), whose diagnostics end with `consequence`.
int open_report_file(const char* name, bool verbose, bool& regular, int access = O_WRONLY,
                     const char* consequence = "no report") {
  regular = false;
  // O_NOFOLLOW: a symbolic link planted where the report goes (a shared directory) is not followed. No O_TRUNC
  // here: the file may be another process's report, still being written. O_NONBLOCK: a FIFO without a reader
  // fails at once (ENXIO) instead of holding the program before main.
  int fd = open(name, access | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) {
    int error = errno;
    struct stat status {};
    if (error == ELOOP && lstat(name, &status) == 0 && S_ISLNK(status.st_mode)) {
      say("SAMPLER_FILE: cannot create '", name, "': it is a symbolic link; ", consequence);
    } else if (error == ENXIO && lstat(name, &status) == 0 && S_ISFIFO(status.st_mode)) {
      if (verbose) say("SAMPLER_FILE: '", name, "' is a FIFO that no one reads; ", consequence);
    } else {
      say("SAMPLER_FILE: cannot create '", name, "': ", strerror(error), "; ", consequence);
    }
    return -1;
  }
  struct stat status {};
  if (fstat(fd, &status) != 0) {
    say("SAMPLER_FILE: cannot examine '", name, "': ", strerror(errno), "; ", consequence);
    close(fd);
    return -1;
  }
  // Whatever its kind, a file someone else owns does not receive the report (a FIFO planted in a shared directory
  // would hand it to its owner); devices (/dev/null, the user's terminal) are the system's, and are written.
  if (!S_ISCHR(status.st_mode) && status.st_uid != geteuid()) {
    say("SAMPLER_FILE: '", name, "' belongs to another user; ", consequence);
    close(fd);
    return -1;
  }
  // Writing blocks again as it does on any descriptor (a FIFO's reader that is slow is waited for).
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (S_ISREG(status.st_mode)) {
    regular = true;
    // A regular file: the report replaces its contents.
    // A report has one name. Another one (a hard link made in a shared directory to a file of the same owner)
    // would make the report replace a file the user never named.
    if (status.st_nlink > 1) {
      say("SAMPLER_FILE: '", name, "' has other names (hard links); ", consequence);
      close(fd);
      return -1;
    }
    // Held until the report's descriptor is closed (exit, or the process's end): a second run with the same name
    // meanwhile finds it taken. Where flock() is not supported, the file is used without it.
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
      say("SAMPLER_FILE: '", name,
          "' is being written by another process (%p in the name gives each process its own file); ", consequence);
      close(fd);
      return -1;
    }
    if (ftruncate(fd, 0) != 0) {
      say("SAMPLER_FILE: cannot truncate '", name, "': ", strerror(errno), "; ", consequence);
      close(fd);
      return -1;
    }
  }
  // Anything else (a device such as /dev/null, a FIFO) is written as it is.
  return above_standard_streams(fd);
}

/// Every variable the runtime reads.
const char* const kVariables[] = {"SAMPLER_SPARSITY", "SAMPLER_SEED", "SAMPLER_FILE", "SAMPLER_REPORT_FD",
                                  "SAMPLER_SHARED_FD", "SAMPLER_INTERVAL", "SAMPLER_VERBOSE", "SAMPLER_PLAN"};

}  // namespace

bool open_counters_file(const char* report_name, bool verbose, Settings& settings) {
  static char name[kMaxFileName + sizeof kCountersSuffix];
  CharBuffer text(name, sizeof name - 1);
  text.append(report_name);
  text.append(kCountersSuffix);
  name[text.size()] = '\0';
  bool regular = false;
  int fd = open_report_file(name, verbose, regular, O_RDWR, "no shared counters");
  if (fd < 0) return false;
  ParseStatus status{false, "it is not a regular file"};
  // Truncated to 0 by open_report_file, then extended: zero-filled, as claim_shared_area needs, and sparse.
  if (regular && ftruncate(fd, static_cast<off_t>(kCountersFileBytes)) != 0) status.error = strerror(errno);
  else if (regular) status = map_shared_descriptor(fd, settings.shared_base, settings.shared_size);
  if (!status.ok) {
    say("SAMPLER_FILE: cannot use '", name, "' for the counters (", status.error, "); no shared counters");
    close(fd);
    return false;
  }
  settings.counters_path = name;
  settings.counters_fd = fd;
  if (verbose) say("counting in the mapping of '", name, "' (%c in SAMPLER_FILE)");
  return true;
}

Settings load_settings(bool secure) {
  Settings settings;
  if (secure) {
    // The variables come from a user with fewer privileges than the process: obeying SAMPLER_FILE would let them
    // create or overwrite any file as the program's owner. Removed, so that a child the program runs with its
    // privileges (after setuid(0), say) does not obey them either.
    bool verbose = getenv("SAMPLER_VERBOSE") != nullptr;
    for (const char* name : kVariables) unsetenv(name);
    if (verbose) {
      say("running with privileges its user does not have (setuid, setgid or file capabilities): every SAMPLER_* "
          "variable is ignored");
    }
    return settings;
  }
  static char sparsity_text[256], seed_text[256], file_text[kMaxFileName], fd_text[64], shared_text[64],
      interval_text[64], plan_text[kMaxFileName];
  bool sparsity_rejected, seed_rejected, file_rejected, fd_rejected, shared_rejected, interval_rejected,
      plan_rejected;
  const char* sparsity =
      take_variable("SAMPLER_SPARSITY", sparsity_text, sizeof sparsity_text, "sampling is off", sparsity_rejected);
  const char* seed = take_variable("SAMPLER_SEED", seed_text, sizeof seed_text, "sampling is off", seed_rejected);
  const char* file = take_variable("SAMPLER_FILE", file_text, sizeof file_text, "no report", file_rejected);
  const char* fd = take_variable("SAMPLER_REPORT_FD", fd_text, sizeof fd_text, "no report", fd_rejected);
  const char* shared =
      take_variable("SAMPLER_SHARED_FD", shared_text, sizeof shared_text, "no shared counters", shared_rejected);
  const char* interval =
      take_variable("SAMPLER_INTERVAL", interval_text, sizeof interval_text, "no interim reports", interval_rejected);
  const char* plan = take_variable("SAMPLER_PLAN", plan_text, sizeof plan_text, "sampling is uniform", plan_rejected);
  const char* verbose = getenv("SAMPLER_VERBOSE");
  settings.verbose = verbose != nullptr;
  if (verbose != nullptr) unsetenv("SAMPLER_VERBOSE");

  // Sampling: SAMPLER_SPARSITY, then SAMPLER_SEED; either one invalid turns sampling off.
  bool sampling_ok = !sparsity_rejected && !seed_rejected;
  if (sparsity == nullptr) {
    sampling_ok = false;
    if (settings.verbose && !sparsity_rejected && plan == nullptr) say("SAMPLER_SPARSITY is not set: sites never sample");
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
  // A plan (plan.h) turns sampling on by itself: the sites it names sample at its rates, the others at
  // SAMPLER_SPARSITY's (none when unset). Invalid sampling variables leave sampling off, plan or not.
  bool sampling_variables_ok = !sparsity_rejected && !seed_rejected && (sparsity == nullptr || sampling_ok);
  if (plan != nullptr && sampling_variables_ok && !(seed != nullptr && !settings.seeded)) {
    settings.plan = load_plan(plan, sparsity, settings.sparsity, settings.verbose);
    if (settings.plan) sampling_ok = true;
  } else if (plan != nullptr) {
    say("SAMPLER_PLAN: not used: sampling is off");
  }
  settings.sampling = sampling_ok;
  if (settings.verbose && sampling_ok && sparsity != nullptr) {
    say("sampling one opportunity in ", sparsity, " on average (SAMPLER_SPARSITY), ",
        settings.seeded ? "seeded from SAMPLER_SEED=" : "seeded from the system's entropy",
        settings.seeded ? seed : nullptr);
  }

  // The destination: SAMPLER_REPORT_FD wins over SAMPLER_FILE; either one invalid turns the report off.
  bool continuous = false;  // %c in SAMPLER_FILE
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
      // The program's descriptor stays as it is (its flags, and open: it may be its own stdout, which stdio still
      // flushes after the report, or a system() child's). The report goes to a close-on-exec duplicate, ours.
      int duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 3);
      if (duplicate < 0) {
        say("SAMPLER_REPORT_FD: cannot duplicate descriptor ", fd, ": ", strerror(errno), "; no report");
      } else {
        settings.report_fd = duplicate;
        if (settings.verbose) say("writing the report to descriptor ", fd, " (SAMPLER_REPORT_FD)");
      }
    }
    if (file != nullptr && settings.verbose) say("SAMPLER_FILE ignored: SAMPLER_REPORT_FD wins");
  } else if (file != nullptr) {
    static char name[kMaxFileName];
    static struct utsname host;
    if (uname(&host) != 0) host.nodename[0] = '\0';
    const FileNameValues values{getpid(), host.nodename, static_cast<uint64_t>(time(nullptr))};
    ParseStatus status = expand_file_name(file, values, name, sizeof name, &continuous);
    if (!status.ok) {
      say("SAMPLER_FILE: invalid value '", file, "' (", status.error, "); no report");
    } else {
      bool regular = false;
      int descriptor = open_report_file(name, settings.verbose, regular);
      if (descriptor >= 0) {
        settings.report_fd = descriptor;
        if (regular) settings.report_path = name;
        if (settings.verbose) say("writing the report to '", name, "' (SAMPLER_FILE)");
      }
      if (continuous && descriptor >= 0 && !regular) {
        say("SAMPLER_FILE: %c needs a regular report file ('", name, "' is not one); no shared counters");
      }
    }
  } else if (settings.verbose) {
    say("neither SAMPLER_FILE nor SAMPLER_REPORT_FD is set: no report");
  }

  // Interim reports (runtime_state.h, write_interim_report): only with a destination to write them to.
  if (interval != nullptr) {
    ParseStatus status = parse_interval(interval, settings.interval_seconds);
    if (!status.ok) {
      say("SAMPLER_INTERVAL: invalid value '", interval, "' (", status.error, "); no interim reports");
    } else if (settings.report_fd < 0) {
      settings.interval_seconds = 0;
      if (settings.verbose) say("SAMPLER_INTERVAL ignored: there is no report to write");
    } else if (settings.verbose) {
      say("an interim report every ", interval, " s (SAMPLER_INTERVAL), at the first sample or unit's exit after it");
    }
  }

  // The shared counters (shared_counters.h): independent of the report, and optional: without them the runtime
  // behaves exactly as it does when the variable is not set.
  // SAMPLER_SHARED_FD wins over %c: the parent that gave the descriptor is the one that reads it.
  if (shared != nullptr) {
    int descriptor = -1;
    ParseStatus status = parse_descriptor(shared, descriptor);
    if (status.ok) status = map_shared_descriptor(descriptor, settings.shared_base, settings.shared_size);
    if (!status.ok) {
      say("SAMPLER_SHARED_FD: invalid value '", shared, "' (", status.error, "); no shared counters");
    } else if (settings.verbose) {
      say("counting in the mapping of descriptor ", shared, " (SAMPLER_SHARED_FD)");
    }
    if (continuous && settings.verbose) say("%c in SAMPLER_FILE ignored: SAMPLER_SHARED_FD wins");
  } else if (continuous && settings.report_path != nullptr) {
    open_counters_file(settings.report_path, settings.verbose, settings);
  }
  return settings;
}

}  // namespace sampler::runtime
