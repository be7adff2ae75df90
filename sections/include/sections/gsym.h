// Reading GSYM symbol files (GSYM format; the layout LLVM's llvm-gsymutil writes): address -> function, source file
// and line, with the inline call chain.
//
// Layout (docs/formats.md, "GSYM"): a 48-byte header (magic "GSYM", version 1, address offset size, UUID size,
// base address, number of addresses, string table offset and size, 20 UUID bytes), the sorted address table
// (offsets from the base address, 1/2/4/8 bytes each), one 32-bit file offset per address (its function info),
// the file table (count, then directory/name string offsets), the string table, and the function infos (size,
// name, then typed records: line table, inline info, end of list). Either byte order (the magic tells).
//
// The file is never parsed whole: opening checks the header and that every table lies inside the bytes; a lookup
// reads one binary search's worth of the address table and one function info. Every offset and size is checked
// (sections/src/checked.h); a malformed part is an error naming its byte offset, never a crash. verify() walks
// every function info, for tests and fuzzing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sampler::gsym {

constexpr uint32_t kMagic = 0x4753594d;  ///< "GSYM" as a 32-bit number in the file's byte order
constexpr uint16_t kVersion = 1;
constexpr size_t kHeaderSize = 48;
constexpr size_t kMaxUuidSize = 20;
constexpr size_t kMaxInlineDepth = 256;  ///< deeper inline nesting is an error (bounds the recursion)

/// The record types of a function info (GSYM format, "InfoType").
enum class InfoType : uint32_t { kEndOfList = 0, kLineTable = 1, kInlineInfo = 2 };

/// A problem in a GSYM file: where (byte offset from the start of the file) and what.
struct Error {
  uint64_t offset = 0;
  std::string message;
};

/// One frame of a lookup. Views point into the GSYM bytes (valid while they are).
struct Location {
  std::string_view name;  ///< the function (inlined or concrete); as stored (a linkage name for C++)
  std::string_view dir;   ///< the source file's directory (empty if unknown)
  std::string_view file;  ///< the source file's base name (empty if unknown)
  uint32_t line = 0;      ///< 0 if unknown
  uint64_t offset = 0;    ///< address minus the start of this (inlined) function's first range
};

/// The answer for one address: the function's range and the frames, innermost inlined function first, the
/// concrete function last (the order llvm-symbolizer prints).
struct LookupResult {
  uint64_t start = 0;
  uint64_t size = 0;
  std::vector<Location> frames;
};

enum class Found { kYes, kNo, kError };

/// Function infos of recently used functions, decoded whole (name, line table, inline tree, their strings), so
/// that repeated lookups in one function binary-search its rows and walk its tree instead of decoding its bytes
/// again (as llvm-symbolizer keeps DWARF line tables once parsed). Found by the index of the address table entry,
/// with no hashing. Bounded: at most `max_functions` functions; when full it is emptied. One per Reader (it is
/// emptied when used with another) and per thread (lookups through it are not thread-safe).
class LineTableCache {
 public:
  explicit LineTableCache(size_t max_functions = 4096) : max_functions_(max_functions) {}

  /// One decoded line table row.
  struct Row {
    uint64_t address;
    uint64_t file;
    uint32_t line;
  };

 private:
  friend class Reader;
  friend class FunctionDecoder;
  /// An inline tree decoded in depth-first order: node i's descendants are i+1 .. subtree_end-1.
  struct Node {
    uint64_t first_start;
    uint32_t ranges_begin, ranges_end;  // in Tree::ranges
    uint32_t subtree_end;
    uint32_t name;
    uint64_t call_file;
    uint64_t call_line;
    uint64_t at;  // file offset of the node's has-children byte (for errors, as the byte walk reports them)
    // This node's children's ranges in Tree::child_spans, sorted by start; searched by halves when
    // `disjoint_children` (at most one child holds an address), else walked in order like the bytes.
    uint32_t spans_begin, spans_end;
    bool disjoint_children;
    // The name and call file's strings, found once when the tree is decoded (resolved: all three found).
    bool resolved;
    std::string_view name_text, call_dir, call_file_name;
  };
  /// One range of a child: [start, end) belongs to node `child`.
  struct ChildSpan {
    uint64_t start, end;
    uint32_t child;
  };
  struct Tree {
    std::vector<Node> nodes;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [start, start + size)
    std::vector<ChildSpan> child_spans;
  };
  /// One function info with at most one line table and one inline info, all of which decoded (others, and
  /// malformed ones, take the byte walk, which reports the error where it lies).
  struct Function {
    uint32_t index = 0;  // in the address table
    uint64_t start = 0;
    uint32_t size = 0;
    std::string_view name;
    uint64_t end = 0;  // the offset after its end-of-list record (where the byte walk names a row's bad file)
    bool has_rows = false;
    bool sorted = true;                  // rows in ascending address order (unless an address wrapped around)
    std::vector<uint64_t> row_addresses;  // apart from the rest of the rows: the binary search reads only these
    std::vector<std::pair<uint32_t, uint32_t>> row_file_line;
    bool has_tree = false;
    Tree tree;
  };
  struct File {
    bool resolved = false;
    std::string_view dir, name;
  };
  static constexpr uint32_t kNotDecoded = 0;
  static constexpr uint32_t kByteWalk = 1;  // slot value of a function info the cache does not hold

  size_t max_functions_;
  const void* reader_ = nullptr;    // the bytes of the Reader the slots are for
  std::vector<uint32_t> slots_;     // by address index: kNotDecoded, kByteWalk (kept), or 2 + index in functions_
  std::vector<Function> functions_;
  std::vector<File> files_;         // by file index
};

/// A GSYM file over bytes the caller keeps alive (a mapping or a buffer).
class Reader {
 public:
  /// Checks the header and the extents of the tables; nullopt and `error` if they are malformed.
  static std::optional<Reader> open(std::string_view bytes, Error& error);

  /// Looks up `address`: kYes fills `result`; kNo if no function covers it (before the first, after the last,
  /// or in a gap between functions); kError fills `error` if the function info found is malformed.
  /// With a `cache`, the function's line table is decoded once and then binary-searched: the same answers.
  Found lookup(uint64_t address, LookupResult& result, Error& error, LineTableCache* cache = nullptr) const;

  /// Decodes every function info completely (its line table and inline tree); false and `error` at the first
  /// malformed one. Touches the whole file: for tests, fuzzing and checking a file once after writing it.
  bool verify(Error& error) const;

  uint64_t base_address() const { return base_address_; }
  uint32_t address_count() const { return address_count_; }
  /// The start address of function info `index` (< address_count()).
  uint64_t address_at(uint32_t index) const;
  std::string_view uuid() const { return uuid_; }
  /// The NUL-terminated string at `offset` in the string table, or nullopt if it does not end inside it.
  std::optional<std::string_view> string_at(uint32_t offset) const;

 private:
  Reader() = default;
  struct FileEntry {
    std::string_view dir, file;
  };
  bool file_at(uint64_t index, FileEntry& entry, uint64_t where, Error& error) const;
  bool string_or_error(uint32_t offset, uint64_t where, std::string_view& out, Error& error) const;
  Found lookup_at(uint32_t index, uint64_t address, LookupResult& result, Error& error) const;
  /// The cached decoding of function info `index`, decoding it first; nullptr if it takes the byte walk.
  const LineTableCache::Function* cached_function(LineTableCache& cache, uint32_t index) const;
  bool decode_function(uint32_t index, LineTableCache::Function& function) const;
  Found cached_lookup(LineTableCache& cache, const LineTableCache::Function& function, uint64_t address,
                      LookupResult& result, Error& error) const;
  static void index_children(LineTableCache::Tree& tree);
  /// Adds the inline frames of `address` from a cached tree; false and `error` if a node's strings are bad.
  bool cached_inline(const LineTableCache::Tree& tree, uint64_t address, std::vector<Location>& frames,
                     Error& error) const;
  friend class FunctionDecoder;

  std::string_view bytes_;
  bool little_ = true;
  uint8_t address_size_ = 0;
  uint64_t base_address_ = 0;
  uint32_t address_count_ = 0;
  uint64_t address_table_ = 0;  // file offsets of the tables
  uint64_t info_offsets_ = 0;
  uint64_t file_table_ = 0;
  uint32_t file_count_ = 0;
  std::string_view strings_;
  uint64_t strings_offset_ = 0;
  std::string_view uuid_;
};

/// A GSYM file mapped read-only, with its Reader.
class MappedFile {
 public:
  /// Maps and opens `path`; nullptr and `error` (offset 0 for a file that cannot be read) on failure.
  static std::unique_ptr<MappedFile> open(const std::string& path, Error& error);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const Reader& reader() const { return *reader_; }

 private:
  MappedFile() = default;
  void* address_ = nullptr;
  size_t size_ = 0;
  std::optional<Reader> reader_;
};

}  // namespace sampler::gsym
