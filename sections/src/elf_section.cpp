// Reading one named section out of ELF files and ar archives (see sections/elf_section.h, docs/tools.md).
//
// libelf does the walking: elf_begin(ELF_C_READ_MMAP) on files, elf_memory on images, elf_next/elf_getarhdr for
// archive members, gelf_* for both ELF classes and byte orders. Before libelf is trusted with an image, its
// headers are validated here with the checked readers of checked.h, so that a lying header becomes a diagnostic
// that says what is wrong, and every section range is checked against the image before elf_rawdata. Uncompressed
// sections are handed out as views into the mapping (zero copy). Compressed ones are decompressed once, straight
// into a buffer of their stated size, or, streamed, through one small buffer; either way only after that size has
// been checked against kMaxExpansion and kMaxDecompressedSize.
#include "sections/elf_section.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
// ZSTD_getFrameHeader (zstd's "experimental" API, exported by the shared library): see check_zstd_frames.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <vector>

#include "checked.h"
#include "elf_image.h"
#include "inflater.h"
#include "sections/input_files.h"

namespace sampler {
namespace {

// gABI value; glibc's <elf.h> before 2.37 does not name it yet.
constexpr uint32_t kCompressZstd = 2;
static_assert(ELFCOMPRESS_ZLIB == 1);

// An archive inside an archive is legal but rare; the bound keeps a crafted file from recursing without end.
constexpr int kMaxArchiveDepth = 4;
// Legacy GNU compression (.zdebug_*): "ZLIB", then the uncompressed size as 8 big-endian bytes, then zlib data.
constexpr std::string_view kLegacyMagic = "ZLIB";
constexpr size_t kLegacyHeaderSize = 12;

std::string quoted(std::string_view name) { return "section '" + std::string(name) + "'"; }

}  // namespace

// ---- Shared with the other ELF readers (elf_image.h) ------------------------------------------------------------

namespace elf {

using checked::ByteOrder;

std::string hex(uint64_t value) {
  char text[24];
  snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

void init_libelf() {
  // elf_version must be called once before any other libelf call; a function-local static makes that thread-safe.
  static const bool initialised = elf_version(EV_CURRENT) != EV_NONE;
  (void)initialised;
}

std::string_view raw_image(Elf* elf) {
  size_t size = 0;
  const char* data = elf_rawfile(elf, &size);
  return data == nullptr ? std::string_view() : std::string_view(data, size);
}

// ---- Header validation ---------------------------------------------------------------------------------------

namespace {

/// The ELF header fields the validation needs, normalised to 64 bits and native byte order.
struct RawElfHeader {
  bool is64 = false;
  ByteOrder order = ByteOrder::kLittle;
  uint64_t shoff = 0;
  uint64_t shnum = 0;  // after extended numbering (e_shnum == 0: the count is in section 0's sh_size)
  uint64_t shstrndx = 0;
};

/// Reads the section header `index` fields that matter here: type, offset, size (and link, for SHN_XINDEX).
struct RawSectionHeader {
  uint32_t type = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
};

std::optional<RawSectionHeader> read_section_header(std::string_view image, const RawElfHeader& h, uint64_t index) {
  const uint64_t entry_size = h.is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
  auto at = checked::mul(index, entry_size);
  if (!at) return std::nullopt;
  auto start = checked::add(h.shoff, *at);
  if (!start) return std::nullopt;
  auto entry = checked::substr(image, *start, entry_size);
  if (!entry) return std::nullopt;
  RawSectionHeader s;
  if (h.is64) {
    s.type = *checked::read_uint<uint32_t>(*entry, offsetof(Elf64_Shdr, sh_type), h.order);
    s.offset = *checked::read_uint<uint64_t>(*entry, offsetof(Elf64_Shdr, sh_offset), h.order);
    s.size = *checked::read_uint<uint64_t>(*entry, offsetof(Elf64_Shdr, sh_size), h.order);
    s.link = *checked::read_uint<uint32_t>(*entry, offsetof(Elf64_Shdr, sh_link), h.order);
  } else {
    s.type = *checked::read_uint<uint32_t>(*entry, offsetof(Elf32_Shdr, sh_type), h.order);
    s.offset = *checked::read_uint<uint32_t>(*entry, offsetof(Elf32_Shdr, sh_offset), h.order);
    s.size = *checked::read_uint<uint32_t>(*entry, offsetof(Elf32_Shdr, sh_size), h.order);
    s.link = *checked::read_uint<uint32_t>(*entry, offsetof(Elf32_Shdr, sh_link), h.order);
  }
  return s;
}

}  // namespace

std::string check_elf_headers(std::string_view image) {
  if (!image.starts_with(kElfMagic)) return std::string(kNotElf);
  if (image.size() < EI_NIDENT) {
    return "truncated ELF header (" + std::to_string(image.size()) + " bytes)";
  }
  RawElfHeader h;
  const auto elf_class = static_cast<unsigned char>(image[EI_CLASS]);
  const auto data = static_cast<unsigned char>(image[EI_DATA]);
  if (elf_class != ELFCLASS32 && elf_class != ELFCLASS64) {
    return "unknown ELF class " + std::to_string(elf_class);
  }
  if (data != ELFDATA2LSB && data != ELFDATA2MSB) return "unknown ELF byte order " + std::to_string(data);
  if (const auto version = static_cast<unsigned char>(image[EI_VERSION]); version != EV_CURRENT) {
    return "unknown ELF version " + std::to_string(version);
  }
  h.is64 = elf_class == ELFCLASS64;
  h.order = data == ELFDATA2LSB ? ByteOrder::kLittle : ByteOrder::kBig;
  const size_t header_size = h.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
  if (image.size() < header_size) {
    return "truncated ELF header (" + std::to_string(image.size()) + " bytes, expected " + std::to_string(header_size) +
           ")";
  }
  uint64_t shentsize, shnum, shstrndx;
  if (h.is64) {
    h.shoff = *checked::read_uint<uint64_t>(image, offsetof(Elf64_Ehdr, e_shoff), h.order);
    shentsize = *checked::read_uint<uint16_t>(image, offsetof(Elf64_Ehdr, e_shentsize), h.order);
    shnum = *checked::read_uint<uint16_t>(image, offsetof(Elf64_Ehdr, e_shnum), h.order);
    shstrndx = *checked::read_uint<uint16_t>(image, offsetof(Elf64_Ehdr, e_shstrndx), h.order);
  } else {
    h.shoff = *checked::read_uint<uint32_t>(image, offsetof(Elf32_Ehdr, e_shoff), h.order);
    shentsize = *checked::read_uint<uint16_t>(image, offsetof(Elf32_Ehdr, e_shentsize), h.order);
    shnum = *checked::read_uint<uint16_t>(image, offsetof(Elf32_Ehdr, e_shnum), h.order);
    shstrndx = *checked::read_uint<uint16_t>(image, offsetof(Elf32_Ehdr, e_shstrndx), h.order);
  }
  if (h.shoff == 0) return "";  // no section headers: nothing to find, nothing to check
  const uint64_t entry_size = h.is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
  if (shentsize != entry_size) {
    return "section header entry size is " + std::to_string(shentsize) + ", expected " + std::to_string(entry_size);
  }
  // Extended numbering (gABI): e_shnum 0 and e_shstrndx SHN_XINDEX defer to fields of section header 0.
  auto first = read_section_header(image, h, 0);
  if (!first) {
    return "section header table at offset " + hex(h.shoff) + " is past the end of the file (" +
           std::to_string(image.size()) + " bytes)";
  }
  h.shnum = shnum == 0 ? first->size : shnum;
  h.shstrndx = shstrndx == SHN_XINDEX ? first->link : shstrndx;
  auto table_size = checked::mul(h.shnum, entry_size);
  if (!table_size || !checked::range_fits(h.shoff, *table_size, image.size())) {
    return "section header table (offset " + hex(h.shoff) + ", " + std::to_string(h.shnum) +
           " entries) extends past the end of the file (" + std::to_string(image.size()) + " bytes)";
  }
  if (h.shstrndx == SHN_UNDEF) return "";  // no names: nothing can match, libelf copes
  if (h.shstrndx >= h.shnum) {
    return "section name table index " + std::to_string(h.shstrndx) + " is out of range (" + std::to_string(h.shnum) +
           " sections)";
  }
  auto names = read_section_header(image, h, h.shstrndx);
  if (names->type != SHT_NOBITS && !checked::range_fits(names->offset, names->size, image.size())) {
    return "section name table (offset " + hex(names->offset) + ", size " + hex(names->size) +
           ") extends past the end of the file (" + std::to_string(image.size()) + " bytes)";
  }
  return "";
}

}  // namespace elf

namespace {

using namespace elf;
using checked::ByteOrder;

// ---- Decompression -------------------------------------------------------------------------------------------

enum class Encoding { kPlain, kZlib, kZstd };

/// One section that matched, its headers checked: where its stored bytes are and how they become its contents.
struct SectionPlan {
  std::string name;
  Encoding encoding = Encoding::kPlain;
  std::string_view stored;  ///< kPlain: the contents; otherwise the compressed stream after its header
  uint64_t size = 0;        ///< size of the contents (compressed: as stated, already checked against the limits)
};

using PieceFunction = std::function<void(std::string_view)>;

/// Buffer of `size` bytes without zero-filling it (the decompressor overwrites every byte), or nullptr.
std::unique_ptr<char[]> allocate(uint64_t size) {
  if (size > SIZE_MAX) return nullptr;
  return std::unique_ptr<char[]>(new (std::nothrow) char[size == 0 ? 1 : size]);
}

std::string more_than_stated(uint64_t size) {
  return "decompresses to more than the " + std::to_string(size) + " bytes its header states";
}

std::string other_than_stated(uint64_t produced, uint64_t size) {
  return "decompresses to " + std::to_string(produced) + " bytes, but its header states " + std::to_string(size);
}

/// Inflates the zlib stream `in`, which must decompress to exactly `size` bytes, into `buffer`: each time the
/// buffer is full, and at the end, its filled part goes to `piece` and filling starts again at its start. Given a
/// buffer of `size` bytes that happens once (one inflate, straight into the final buffer). Returns an error or "".
std::string inflate_pieces(std::string_view in, uint64_t size, std::span<char> buffer, const PieceFunction& piece) {
  Inflater inflater(Inflater::Format::kZlib);
  inflater.add_input(in.data(), in.size());
  uint64_t produced = 0;
  size_t used = 0;
  for (;;) {
    const Inflater::Step step = inflater.inflate(buffer.data() + used, buffer.size() - used);
    used += step.produced;
    produced += step.produced;
    if (produced > size) return more_than_stated(size);
    const bool end = step.status == Inflater::Status::kEnd;
    if (used == buffer.size() || (end && used > 0)) {
      piece(std::string_view(buffer.data(), used));
      used = 0;
    }
    if (end) return produced != size ? other_than_stated(produced, size) : "";
    if (step.status == Inflater::Status::kProgress) continue;
    if (step.status == Inflater::Status::kNeedInput && inflater.input_left() == 0) {
      return "compressed data is truncated (zlib stream ends early)";
    }
    const std::string problem = inflater.error();
    return problem.starts_with("out of memory") || !inflater.ready() ? problem : "invalid zlib data: " + problem;
  }
}

/// Decompresses the zstd frames of `in` into exactly `size` bytes at `out`, in one call. Returns an error or "".
std::string zstd_whole(std::string_view in, char* out, uint64_t size) {
  const size_t produced = ZSTD_decompress(out, size, in.data(), in.size());
  if (ZSTD_isError(produced)) {
    if (ZSTD_getErrorCode(produced) == ZSTD_error_dstSize_tooSmall) return more_than_stated(size);
    return std::string("invalid zstd data: ") + ZSTD_getErrorName(produced);
  }
  if (produced != size) return other_than_stated(produced, size);
  return "";
}

/// zstd's streaming decoder (extract-section's path, for sections over kStreamPieceSize) refuses a frame whose
/// window is over 2^ZSTD_WINDOWLOG_LIMIT_DEFAULT (128 MiB), as zstd(1) does without --memory; its one-call decoder
/// (the whole path) needs no window and accepts it. Both readers must give the same answer for the same file
/// (found by the elf fuzz target), so such a frame is refused before anything is decompressed. Returns an error or
/// "" (a malformed frame is left for the decoder to report).
std::string check_zstd_frames(std::string_view in) {
  size_t offset = 0;
  while (offset < in.size()) {
    ZSTD_frameHeader header{};
    if (ZSTD_getFrameHeader(&header, in.data() + offset, in.size() - offset) != 0) return "";
    if (header.frameType == ZSTD_frame && header.windowSize > (uint64_t{1} << ZSTD_WINDOWLOG_LIMIT_DEFAULT)) {
      return std::string("invalid zstd data: ") + ZSTD_getErrorString(ZSTD_error_frameParameter_windowTooLarge);
    }
    const size_t length = ZSTD_findFrameCompressedSize(in.data() + offset, in.size() - offset);
    if (ZSTD_isError(length) || length == 0) return "";
    offset += length;
  }
  return "";
}

/// The streaming counterpart: the zstd frames of `in` (exactly `size` bytes decompressed) go to `piece` through
/// `buffer`, one buffer-full at a time. Returns an error or "".
std::string zstd_pieces(std::string_view in, uint64_t size, std::span<char> buffer, const PieceFunction& piece) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> context(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (context == nullptr) return "out of memory while decompressing";
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  uint64_t produced = 0;
  for (;;) {
    ZSTD_outBuffer output{buffer.data(), buffer.size(), 0};
    const size_t consumed_before = input.pos;
    const size_t rc = ZSTD_decompressStream(context.get(), &output, &input);
    if (ZSTD_isError(rc)) return std::string("invalid zstd data: ") + ZSTD_getErrorName(rc);
    produced += output.pos;
    if (produced > size) return more_than_stated(size);
    if (output.pos > 0) piece(std::string_view(buffer.data(), output.pos));
    if (rc == 0 && input.pos == input.size) break;  // the last frame is complete and flushed
    // With room left in the output and no input left, zstd has flushed all it can: the frame is cut short.
    if (input.pos == input.size && output.pos < output.size) {
      return "compressed data is truncated (zstd frame ends early)";
    }
    if (output.pos == 0 && input.pos == consumed_before) return "invalid zstd data: no progress";
  }
  if (produced != size) return other_than_stated(produced, size);
  return "";
}

/// Decompresses `plan` through `buffer` (see inflate_pieces); zstd into a buffer of the whole size in one call.
std::string decompress(const SectionPlan& plan, std::span<char> buffer, const PieceFunction& piece) {
  if (plan.encoding == Encoding::kZlib) return inflate_pieces(plan.stored, plan.size, buffer, piece);
  if (buffer.size() == plan.size) {
    std::string error = zstd_whole(plan.stored, buffer.data(), plan.size);
    if (error.empty() && plan.size > 0) piece(std::string_view(buffer.data(), buffer.size()));
    return error;
  }
  return zstd_pieces(plan.stored, plan.size, buffer, piece);
}

// ---- Walking files, archives and sections ----------------------------------------------------------------------

/// One request (section name, where the results go, sink) carried through the files, archives and members it
/// visits. Results go either whole to `visit` or in pieces to `stream`.
class Walker {
 public:
  Walker(std::string_view section_name, const std::function<void(const ElfSection&)>* visit,
         const ElfSectionStream* stream, DiagnosticSink& sink)
      : name_(section_name), visit_(visit), stream_(stream), sink_(sink) {}

  /// Visits the ELF or archive `elf`; `fd` is its descriptor, or -1 for an image in memory.
  void visit_any(Elf* elf, const std::string& label, int fd, int depth) {
    switch (elf_kind(elf)) {
      case ELF_K_ELF:
        visit_elf(elf, label);
        break;
      case ELF_K_AR:
        if (depth >= kMaxArchiveDepth) {
          error(label, "archives nested more than " + std::to_string(kMaxArchiveDepth) + " deep");
        } else {
          visit_archive(elf, label, fd, depth);
        }
        break;
      default:
        // libelf calls an ELF file too short for its identification "not ELF"; the header check says more.
        report_unreadable(label, raw_image(elf), depth);
        break;
    }
  }

  /// Reports elf_begin/elf_memory's failure on `image`, saying what is wrong where that can be told.
  void report_unreadable(const std::string& label, std::string_view image, int depth) {
    std::string problem = check_elf_headers(image);
    DiagnosticCode code = DiagnosticCode::kMalformedElf;
    if (problem.empty()) {
      const int libelf_error = elf_errno();
      problem =
          libelf_error != 0 ? std::string("malformed ELF file: ") + elf_errmsg(libelf_error) : "malformed ELF file";
    } else if (problem == kNotElf) {
      // Callers act on these two (find-sampler-info skips members that are not ELF): they carry their own codes.
      code = depth > 0 ? DiagnosticCode::kArchiveMemberNotElf : DiagnosticCode::kNotElf;
      if (depth > 0) problem = "archive member is not an ELF file";
    }
    error(code, label, problem);
  }

  void error(const std::string& label, std::string message) {
    error(DiagnosticCode::kMalformedElf, label, std::move(message));
  }
  void error(DiagnosticCode code, const std::string& label, std::string message) {
    sink_.error(code, label, 0, std::move(message));
    ok_ = false;
  }

  bool ok() const { return ok_; }

 private:
  void visit_archive(Elf* archive, const std::string& label, int fd, int depth);
  void visit_elf(Elf* elf, const std::string& label);
  std::optional<SectionPlan> plan_section(Elf_Scn* scn, const GElf_Shdr& shdr, std::string_view section,
                                          std::string_view image, const std::string& label, ByteOrder order, bool is64);
  bool check_stated_size(std::string_view what, uint64_t stated, std::string_view image, const std::string& label);
  void deliver_whole(const std::vector<SectionPlan>& plans, const std::string& label);
  void deliver_streamed(const std::vector<SectionPlan>& plans, const std::string& label);
  void finish(const ElfSection& result) {
    if (visit_ != nullptr) (*visit_)(result);
    if (stream_ != nullptr && stream_->done) stream_->done(result);
  }
  bool matches(std::string_view have) const;

  std::string_view name_;
  const std::function<void(const ElfSection&)>* visit_;
  const ElfSectionStream* stream_;
  DiagnosticSink& sink_;
  std::unique_ptr<char[]> piece_buffer_;  // kStreamPieceSize bytes, allocated at the first compressed section
  bool ok_ = true;
};

bool Walker::matches(std::string_view have) const {
  if (have == name_) return true;
  // docs/tools.md: a request for .debug_X also finds a legacy compressed .zdebug_X.
  constexpr std::string_view kDebug = ".debug_", kZdebug = ".zdebug_";
  return name_.starts_with(kDebug) && have.starts_with(kZdebug) &&
         have.substr(kZdebug.size()) == name_.substr(kDebug.size());
}

/// The raw ar member header fields needed to step over a member libelf refused (ar(5): 60 bytes per header).
struct RawArHeader {
  std::string name;
  uint64_t size = 0;
};

std::optional<RawArHeader> read_ar_header(std::string_view archive, uint64_t offset) {
  auto header = checked::substr(archive, offset, 60);
  if (!header || header->substr(58, 2) != "`\n") return std::nullopt;
  RawArHeader h;
  h.name = std::string(header->substr(0, 16));
  while (!h.name.empty() && h.name.back() == ' ') h.name.pop_back();
  if (!h.name.starts_with('/') && h.name.ends_with('/')) h.name.pop_back();  // GNU: "name/"
  const std::string_view size_field = header->substr(48, 10);
  size_t digits = 0;
  for (char c : size_field) {
    if (c == ' ') break;
    if (c < '0' || c > '9') return std::nullopt;
    h.size = h.size * 10 + static_cast<uint64_t>(c - '0');  // at most 10 digits: no overflow
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return h;
}

/// Why libelf refused the header of archive member `raw`, as far as can be told: a long name ("/OFFSET") that
/// points past the name table ("//"), or no name table at all.
std::string describe_refused_member(const RawArHeader& raw, std::optional<uint64_t> name_table_size) {
  const std::string_view name = raw.name;
  if (name.size() > 1 && name[0] == '/' && name.find_first_not_of("0123456789", 1) == std::string_view::npos) {
    const std::string offset(name.substr(1));
    if (!name_table_size) {
      return "the member's name is at offset " + offset +
             " of the archive's name table, which the archive does not have";
    }
    return "the member's name is at offset " + offset + " of the archive's name table, which has " +
           std::to_string(*name_table_size) + " bytes";
  }
  return std::string("libelf cannot read the member's header: ") + elf_errmsg(-1);
}

void Walker::visit_archive(Elf* archive, const std::string& label, int fd, int depth) {
  const std::string_view bytes = raw_image(archive);
  // Members are walked by their headers here (ar(5): 60 bytes each, members padded to even offsets), and libelf
  // is pointed at each one with elf_rand: a member whose header libelf refuses (a long-name
  // offset past the name table) is reported and stepped over, and the members after it are still read.
  uint64_t next_header = kArMagic.size();
  std::optional<uint64_t> name_table_size;
  bool any_member = false;
  while (next_header < bytes.size()) {
    const auto raw = read_ar_header(bytes, next_header);
    if (!raw) {
      // Without a header there is no telling where the next member starts: the walk ends here.
      error(DiagnosticCode::kMalformedArchiveMember, label,
            "malformed archive member header at offset " + std::to_string(next_header));
      break;
    }
    const uint64_t data_offset = next_header + 60;
    const uint64_t available = bytes.size() - std::min<uint64_t>(data_offset, bytes.size());
    std::string member_label = label + "(" + raw->name + ")";
    if (raw->size > available) {
      error(DiagnosticCode::kMalformedArchiveMember, member_label,
            "archive member is truncated (its header states " + std::to_string(raw->size) + " bytes, " +
                std::to_string(available) + " remain)");
      break;
    }
    const uint64_t header = next_header;
    next_header = data_offset + raw->size + (raw->size & 1);
    if (raw->name == "//") name_table_size = raw->size;
    if (elf_rand(archive, header) != header) {
      error(DiagnosticCode::kMalformedArchiveMember, member_label,
            describe_refused_member(*raw, name_table_size) + "; the member is skipped");
      continue;
    }
    ElfHandle member(elf_begin(fd, ELF_C_READ_MMAP, archive));
    if (member == nullptr) {
      // libelf read the header but refused the member itself; say why, then go on with the next one.
      report_unreadable(member_label, bytes.substr(data_offset, raw->size), depth + 1);
      continue;
    }
    const Elf_Arhdr* arhdr = elf_getarhdr(member.get());
    const std::string_view name = arhdr != nullptr && arhdr->ar_name != nullptr ? arhdr->ar_name : "";
    // The symbol table ("/", "/SYM64/") and the long-name table ("//") are archive bookkeeping, not members.
    const bool bookkeeping = name == "/" || name == "//" || name == "/SYM64/" || name.starts_with("__.SYMDEF");
    if (!bookkeeping) {
      if (!name.empty()) member_label = label + "(" + std::string(name) + ")";
      any_member = true;
      visit_any(member.get(), member_label, fd, depth + 1);
    }
  }
  // An archive without members still answers the question: the section is not there.
  if (!any_member && ok_) finish(ElfSection{label, ElfSection::Status::kMissing, {}});
}

void Walker::visit_elf(Elf* elf, const std::string& label) {
  const std::string_view image = raw_image(elf);
  if (std::string problem = check_elf_headers(image); !problem.empty()) {
    error(label, problem);
    return;
  }
  const bool is64 = gelf_getclass(elf) == ELFCLASS64;
  const ByteOrder order =
      static_cast<unsigned char>(image[EI_DATA]) == ELFDATA2MSB ? ByteOrder::kBig : ByteOrder::kLittle;
  size_t names_index = 0;
  if (elf_getshdrstrndx(elf, &names_index) != 0) {
    error(label, std::string("cannot read the section name table index: ") + elf_errmsg(-1));
    return;
  }
  // First every header of every matching section is checked; only then is anything read or decompressed.
  std::vector<SectionPlan> plans;
  uint64_t total = 0;
  bool failed = false;
  bool bad_name_reported = false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) {
      error(label, "cannot read section header " + std::to_string(elf_ndxscn(scn)) + ": " + elf_errmsg(-1));
      failed = true;
      continue;
    }
    const char* section = elf_strptr(elf, names_index, shdr.sh_name);
    if (section == nullptr) {
      if (!bad_name_reported) {
        error(label, "the name of section " + std::to_string(elf_ndxscn(scn)) + " (offset " + hex(shdr.sh_name) +
                         ") cannot be read from the section name table");
        bad_name_reported = true;
      }
      failed = true;
      continue;
    }
    if (!matches(section)) continue;
    auto plan = plan_section(scn, shdr, section, image, label, order, is64);
    if (!plan) {
      failed = true;
      continue;
    }
    total = checked::add(total, plan->size).value_or(UINT64_MAX);  // saturates: then over the limit below
    plans.push_back(std::move(*plan));
  }
  if (failed) return;  // each problem was reported; a partial section would be silently wrong
  // Several sections of the name are joined; together they must keep within the limits too.
  if (plans.size() > 1 && !check_stated_size("sections '" + std::string(name_) + "' together", total, image, label)) {
    return;
  }
  if (stream_ != nullptr) {
    deliver_streamed(plans, label);
  } else {
    deliver_whole(plans, label);
  }
}

std::optional<SectionPlan> Walker::plan_section(Elf_Scn* scn, const GElf_Shdr& shdr, std::string_view section,
                                                std::string_view image, const std::string& label, ByteOrder order,
                                                bool is64) {
  SectionPlan plan{std::string(section)};
  if (shdr.sh_type == SHT_NOBITS) return plan;  // occupies no file space: empty by definition
  // The header's offset and size are checked before libelf touches the data: a lie is an error, never a read
  // past the end of the mapping.
  if (!checked::range_fits(shdr.sh_offset, shdr.sh_size, image.size())) {
    error(label, quoted(section) + " (offset " + hex(shdr.sh_offset) + ", size " + hex(shdr.sh_size) +
                     ") extends past the end of the file (" + std::to_string(image.size()) + " bytes)");
    return std::nullopt;
  }
  if (shdr.sh_size == 0) return plan;
  // elf_rawdata on a mapped image points into the mapping: no copy, no byte-order conversion.
  Elf_Data* data = elf_rawdata(scn, nullptr);
  if (data == nullptr || (data->d_buf == nullptr && data->d_size != 0)) {
    error(label, "cannot read " + quoted(section) + ": " + elf_errmsg(-1));
    return std::nullopt;
  }
  const std::string_view raw(static_cast<const char*>(data->d_buf), data->d_size);

  if (shdr.sh_flags & SHF_COMPRESSED) {
    // gABI compression header, in the file's byte order: Elf32_Chdr or Elf64_Chdr, then the compressed stream.
    const size_t header_size = is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
    if (raw.size() < header_size) {
      error(label, quoted(section) + " is compressed but too short for its compression header (" +
                       std::to_string(raw.size()) + " bytes)");
      return std::nullopt;
    }
    const uint32_t type = *checked::read_uint<uint32_t>(raw, 0, order);  // ch_type comes first in both classes
    plan.size = is64 ? *checked::read_uint<uint64_t>(raw, offsetof(Elf64_Chdr, ch_size), order)
                     : *checked::read_uint<uint32_t>(raw, offsetof(Elf32_Chdr, ch_size), order);
    if (type != ELFCOMPRESS_ZLIB && type != kCompressZstd) {
      error(label, quoted(section) + " uses unknown compression type " + std::to_string(type));
      return std::nullopt;
    }
    plan.encoding = type == ELFCOMPRESS_ZLIB ? Encoding::kZlib : Encoding::kZstd;
    plan.stored = raw.substr(header_size);
  } else if (section.starts_with(".zdebug") && raw.size() >= kLegacyHeaderSize && raw.starts_with(kLegacyMagic)) {
    plan.size = *checked::read_uint<uint64_t>(raw, kLegacyMagic.size(), ByteOrder::kBig);
    plan.encoding = Encoding::kZlib;
    plan.stored = raw.substr(kLegacyHeaderSize);
  } else {
    // Like binutils, a .zdebug section without the "ZLIB" header is taken as it is.
    plan.stored = raw;
    plan.size = raw.size();
    return plan;
  }
  if (!check_stated_size(quoted(section), plan.size, image, label)) return std::nullopt;
  if (plan.encoding == Encoding::kZstd) {
    if (std::string problem = check_zstd_frames(plan.stored); !problem.empty()) {
      error(label, quoted(section) + ": " + problem);
      return std::nullopt;
    }
  }
  return plan;
}

bool Walker::check_stated_size(std::string_view what, uint64_t stated, std::string_view image,
                               const std::string& label) {
  // The stated size is checked before anything is allocated (docs/tools.md): over kMaxDecompressedSize, or over
  // kMaxExpansion times the input (the ELF image: the file, or the archive member), it is a bomb or a lie.
  if (stated > kMaxDecompressedSize) {
    error(DiagnosticCode::kTooLarge, label,
          std::string(what) + " states a decompressed size of " + std::to_string(stated) +
              " bytes, over the limit of " + std::to_string(kMaxDecompressedSize) + " bytes");
    return false;
  }
  const auto limit = checked::mul<uint64_t>(image.size(), kMaxExpansion);
  if (limit && stated > *limit) {
    error(DiagnosticCode::kTooLarge, label,
          std::string(what) + " states a decompressed size of " + std::to_string(stated) + " bytes, over " +
              std::to_string(kMaxExpansion) + " times the size of the file (" + std::to_string(image.size()) +
              " bytes)");
    return false;
  }
  return true;
}

void Walker::deliver_whole(const std::vector<SectionPlan>& plans, const std::string& label) {
  ElfSection result{label, ElfSection::Status::kMissing, {}};
  std::unique_ptr<char[]> owned;
  if (plans.size() == 1 && plans.front().encoding == Encoding::kPlain) {
    result.bytes = plans.front().stored;  // the common case: a view into the mapping, no copy
  } else if (!plans.empty()) {
    // Decompressed, or several sections joined in order (as a linker would): one buffer of the total size,
    // each section decompressed straight into its place.
    uint64_t total = 0;
    for (const auto& plan : plans) total += plan.size;
    owned = allocate(total);
    if (owned == nullptr) {
      error(label, "out of memory reading " + quoted(name_) + " (" + std::to_string(total) + " bytes)");
      return;
    }
    char* out = owned.get();
    for (const auto& plan : plans) {
      if (plan.encoding == Encoding::kPlain) {
        if (plan.size > 0) memcpy(out, plan.stored.data(), plan.size);
      } else {
        // A stated size of 0 still needs room to find out whether the stream holds more than it says.
        char spare[1];
        std::span<char> place = plan.size > 0 ? std::span<char>(out, plan.size) : std::span<char>(spare);
        const std::string problem = decompress(plan, place, [](std::string_view) {});
        if (!problem.empty()) {
          error(label, quoted(plan.name) + ": " + problem);
          return;
        }
      }
      out += plan.size;
    }
    result.bytes = std::string_view(owned.get(), total);
  }
  if (!plans.empty()) {
    // Only NUL bytes (or none) is empty: the extraction removes NULs, so nothing would come out (docs/tools.md).
    result.status = result.bytes.find_first_not_of('\0') == std::string_view::npos ? ElfSection::Status::kEmpty
                                                                                   : ElfSection::Status::kFound;
  }
  finish(result);
}

void Walker::deliver_streamed(const std::vector<SectionPlan>& plans, const std::string& label) {
  bool any_content = false;
  const PieceFunction pass_on = [&](std::string_view piece) {
    if (!any_content && piece.find_first_not_of('\0') != std::string_view::npos) any_content = true;
    if (stream_->piece) stream_->piece(piece);
  };
  for (const auto& plan : plans) {
    if (plan.encoding == Encoding::kPlain) {
      if (!plan.stored.empty()) pass_on(plan.stored);
      continue;
    }
    if (piece_buffer_ == nullptr) {
      piece_buffer_ = allocate(kStreamPieceSize);
      if (piece_buffer_ == nullptr) {
        error(label, "out of memory reading " + quoted(plan.name));
        return;
      }
    }
    const std::string problem = decompress(plan, std::span<char>(piece_buffer_.get(), kStreamPieceSize), pass_on);
    if (!problem.empty()) {
      error(label, quoted(plan.name) + ": " + problem);
      return;
    }
  }
  const auto status = plans.empty() ? ElfSection::Status::kMissing
                      : any_content ? ElfSection::Status::kFound
                                    : ElfSection::Status::kEmpty;
  finish(ElfSection{label, status, {}});
}

/// Opens `path` and walks it (for_each_elf_section and its streamed form).
bool walk_file(const std::string& path, Walker& walker, DiagnosticSink& sink) {
  init_libelf();
  // Only regular files: ELF parsing needs random access, and reading a pipe or device to its end has no bound.
  // open_input() never waits for a FIFO's writer and refuses every other kind with a message naming it.
  std::optional<InputFile> file = open_input(path, AcceptedKinds{}, sink);
  if (!file) return false;
  const int fd = file->fd.get();
  if (file->size == 0) {
    walker.error(DiagnosticCode::kNotElf, path, std::string(kNotElf) + " (the file is empty)");
    return false;
  }
  ElfHandle elf(elf_begin(fd, ELF_C_READ_MMAP, nullptr));
  if (elf == nullptr) {
    // libelf refused the file: map it here only to say precisely what is wrong.
    const size_t size = static_cast<size_t>(file->size);
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      walker.error(path, std::string("cannot read: ") + elf_errmsg(-1));
      return false;
    }
    walker.report_unreadable(path, std::string_view(static_cast<const char*>(map), size), 0);
    munmap(map, size);
    return false;
  }
  walker.visit_any(elf.get(), path, fd, 0);
  return walker.ok();
}

}  // namespace

bool for_each_elf_section(const std::string& path, std::string_view section_name,
                          const std::function<void(const ElfSection&)>& visit, DiagnosticSink& sink) {
  Walker walker(section_name, &visit, nullptr, sink);
  return walk_file(path, walker, sink);
}

bool for_each_elf_section_streamed(const std::string& path, std::string_view section_name,
                                   const ElfSectionStream& stream, DiagnosticSink& sink) {
  Walker walker(section_name, nullptr, &stream, sink);
  return walk_file(path, walker, sink);
}

namespace {

/// Walks an image in memory (for_each_elf_section_in_memory and its streamed form).
bool walk_memory(std::string_view image, const std::string& label, Walker& walker) {
  init_libelf();
  if (image.empty()) {
    walker.error(DiagnosticCode::kNotElf, label, std::string(kNotElf) + " (the file is empty)");
    return false;
  }
  // elf_memory takes a non-const pointer because libelf may convert data in place; only headers (which libelf
  // copies for conversion) and elf_rawdata (which never converts) are used here, so the image is never written.
  ElfHandle elf(elf_memory(const_cast<char*>(image.data()), image.size()));
  if (elf == nullptr) {
    walker.report_unreadable(label, image, 0);
    return false;
  }
  walker.visit_any(elf.get(), label, -1, 0);
  return walker.ok();
}

}  // namespace

bool for_each_elf_section_in_memory(std::string_view image, const std::string& label, std::string_view section_name,
                                    const std::function<void(const ElfSection&)>& visit, DiagnosticSink& sink) {
  Walker walker(section_name, &visit, nullptr, sink);
  return walk_memory(image, label, walker);
}

bool for_each_elf_section_streamed_in_memory(std::string_view image, const std::string& label,
                                             std::string_view section_name, const ElfSectionStream& stream,
                                             DiagnosticSink& sink) {
  Walker walker(section_name, nullptr, &stream, sink);
  return walk_memory(image, label, walker);
}

bool looks_like_elf_or_archive(std::string_view first_bytes) {
  return first_bytes.starts_with(kElfMagic) || first_bytes.starts_with(kArMagic);
}

void for_each_non_nul_span(std::string_view bytes, const std::function<void(std::string_view)>& write) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  while (p < end) {
    const char* nul = static_cast<const char*>(memchr(p, '\0', static_cast<size_t>(end - p)));
    const char* stop = nul != nullptr ? nul : end;
    if (stop > p) write(std::string_view(p, static_cast<size_t>(stop - p)));
    if (nul == nullptr) break;
    p = nul + 1;
  }
}

}  // namespace sampler
