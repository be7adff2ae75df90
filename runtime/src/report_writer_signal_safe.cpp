// Report writer (see report_writer.h). Signal-safe: runs in the crash handler, so it calls nothing but the
// sink and raw system calls, allocates nothing, and every loop is bounded by the unit's tables.
#include "report_writer.h"

#include "atomic.h"
#include "raw_syscall.h"
#include "values.h"

#include "sections/core/char_buffer.h"

namespace sampler::runtime {
namespace {

/// Room kept free for a line before end_line() flushes: three 20-digit counters and their tabs, typical of
/// every scheme but float-kinds and generic tuples (longer lines simply flush within the line).
constexpr size_t kLineReserve = 128;

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

bool write_to_descriptor(void* context, const char* data, size_t size) {
  int fd = *static_cast<int*>(context);
  return fd >= 0 && sys::write_all(fd, data, size);
}

bool ReportWriter::flush() {
  if (size_ > 0 && !failed_) {
    // Seen by a signal handler interrupting this thread (signal fences: same thread, no reordering around).
    __atomic_store_n(&flushing_, true, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    const bool written = sink_.write(sink_.context, buffer_, size_);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&flushing_, false, __ATOMIC_RELAXED);
    if (!written) {
      failed_ = true;
    } else {
      flushed_bytes_ += size_;
      flushed_mid_line_ = buffer_[size_ - 1] != '\n';
    }
  }
  size_ = 0;
  flushed_open_section_ = open_section_;
  return !failed_;
}

void ReportWriter::reserve(size_t bytes) {
  if (capacity_ - size_ < bytes) flush();
}

void ReportWriter::append(const char* text, size_t length) {
  while (length > 0) {
    if (size_ == capacity_) flush();
    size_t room = capacity_ - size_;
    size_t n = length < room ? length : room;
    __builtin_memcpy(buffer_ + size_, text, n);
    size_ += n;
    text += n;
    length -= n;
  }
}

void ReportWriter::append(const char* c_string) { append(c_string, __builtin_strlen(c_string)); }

void ReportWriter::append(char c) {
  if (size_ == capacity_) flush();
  buffer_[size_++] = c;
}

void ReportWriter::append_decimal(uint64_t value) {
  if (value < 10) {  // counters are mostly 0: the short path matters for the 100 MB/s goal
    append(static_cast<char>('0' + value));
    return;
  }
  char digits[20];
  size_t position = sizeof digits;
  while (value != 0) {
    digits[--position] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  append(digits + position, sizeof digits - position);
}

void ReportWriter::append_signed_decimal(int64_t value) {
  if (value < 0) {
    append('-');
    append_decimal(0 - static_cast<uint64_t>(value));  // unsigned negation: INT64_MIN does not overflow
  } else {
    append_decimal(static_cast<uint64_t>(value));
  }
}

void ReportWriter::append_hex(uint64_t value) {
  char digits[18];
  size_t position = sizeof digits;
  do {
    digits[--position] = kHexDigits[value & 0xf];
    value >>= 4;
  } while (value != 0);
  digits[--position] = 'x';
  digits[--position] = '0';
  append(digits + position, sizeof digits - position);
}

void ReportWriter::append_attribute(const char* value) {
  for (const char* p = value; *p != '\0'; ++p) {
    switch (*p) {
      case '&':
        append("&amp;");
        break;
      case '<':
        append("&lt;");
        break;
      case '>':
        append("&gt;");
        break;
      case '"':
        append("&quot;");
        break;
      case '\'':
        append("&apos;");
        break;
      default:
        append(*p);
    }
  }
}

void ReportWriter::end_line() {
  append('\n');
  reserve(kLineReserve);
}

const char* check_unit(const sampler_unit& unit) {
  if (unit.abi_version < SAMPLER_ABI_OLDEST_VERSION || unit.abi_version > SAMPLER_ABI_VERSION) return "built for another version of the sampler ABI";
  if (unit.signature == nullptr) return "no signature";
  for (int i = 0; i < 32; ++i) {
    if (!is_lower_hex(unit.signature[i])) return "the signature is not 32 lower-case hexadecimal digits";
  }
  if (unit.signature[32] != '\0') return "the signature is not 32 lower-case hexadecimal digits";
  if (unit.scheme_count > 0 && unit.schemes == nullptr) return "no scheme table";
  for (uint32_t i = 0; i < unit.scheme_count; ++i) {
    const sampler_scheme& scheme = unit.schemes[i];
    if (scheme.name == nullptr || scheme.name[0] == '\0') return "a scheme without a name";
    for (const char* p = scheme.name; *p != '\0'; ++p) {
      if (static_cast<unsigned char>(*p) < 0x20) return "a scheme name with a control character";
    }
    if (scheme.site_count > 0 && scheme.values == nullptr) return "a scheme without value storage";
    if (scheme.columns == 0 || scheme.columns > 4096) return "a scheme with no columns or more than 4096";
    if (scheme.kind == SAMPLER_SCHEME_BOUNDS) {
      if (scheme.columns != 2) return "a bounds scheme whose columns are not 2";
      if (scheme.site_count > 0 && scheme.bound_types == nullptr) return "a bounds scheme without site types";
      for (uint32_t site = 0; site < scheme.site_count; ++site) {
        if (!bound_type_is_valid(scheme.bound_types[site])) return "a bounds site of unknown type";
      }
    } else if (scheme.kind != SAMPLER_SCHEME_COUNTERS) {
      return "a scheme of unknown kind";
    }
  }
  return nullptr;
}

namespace {

void write_tag(ReportWriter& out, const char* element, const char* signature, const sampler_scheme& scheme,
               const char* when) {
  out.append('<');
  out.append(element);
  out.append(" unit=\"");
  out.append(signature, 32);
  out.append("\" scheme=\"");
  out.append_attribute(scheme.name);
  if (when != nullptr) {
    out.append("\" when=\"");
    out.append(when);
  }
  out.append("\">");
  out.end_line();
}

void write_bounds_line(ReportWriter& out, uint8_t type, const uint64_t* pair) {
  // pair[0] is ~key of the minimum (values.h); both words read once, relaxed: other threads may still sample.
  uint64_t min_key = ~load_relaxed(&pair[0]);
  uint64_t max_key = load_relaxed(&pair[1]);
  if (bound_type_is_signed(type)) {
    out.append_signed_decimal(bound_signed_value(type, min_key));
    out.append('\t');
    out.append_signed_decimal(bound_signed_value(type, max_key));
  } else if (type == SAMPLER_BOUND_POINTER) {
    out.append_hex(min_key);
    out.append('\t');
    out.append_hex(max_key);
  } else {
    out.append_decimal(bound_unsigned_value(type, min_key));
    out.append('\t');
    out.append_decimal(bound_unsigned_value(type, max_key));
  }
}

void write_timestamps(ReportWriter& out, const char* signature, const sampler_scheme& scheme, const char* when,
                      const uint64_t* stamps) {
  // The state changes before the start tag and after the end tag, so a flush in between sees it open.
  out.set_open_section(OpenSection::kTimestamps);
  write_tag(out, "timestamps", signature, scheme, when);
  for (uint32_t site = 0; site < scheme.site_count; ++site) {
    out.append_decimal(load_relaxed(&stamps[site]));
    out.end_line();
  }
  out.append("</timestamps>");
  out.set_open_section(OpenSection::kNone);
  out.end_line();
}

}  // namespace

void write_scheme(ReportWriter& out, const char* signature, const sampler_scheme& scheme) {
  out.set_open_section(OpenSection::kSamples);
  write_tag(out, "samples", signature, scheme, nullptr);
  const uint64_t* values = scheme.values;
  const uint32_t columns = scheme.columns;
  for (uint32_t site = 0; site < scheme.site_count; ++site, values += columns) {
    if (scheme.kind == SAMPLER_SCHEME_BOUNDS) {
      write_bounds_line(out, scheme.bound_types[site], values);
    } else {
      out.append_decimal(load_relaxed(&values[0]));
      for (uint32_t column = 1; column < columns; ++column) {
        out.append('\t');
        out.append_decimal(load_relaxed(&values[column]));
      }
    }
    out.end_line();
  }
  out.append("</samples>");
  out.set_open_section(OpenSection::kNone);
  out.end_line();
  if (scheme.first != nullptr) write_timestamps(out, signature, scheme, "first", scheme.first);
  if (scheme.last != nullptr) write_timestamps(out, signature, scheme, "last", scheme.last);
}

void write_unit(ReportWriter& out, const sampler_unit& unit) {
  for (uint32_t i = 0; i < unit.scheme_count; ++i) write_scheme(out, unit.signature, unit.schemes[i]);
}

}  // namespace sampler::runtime
