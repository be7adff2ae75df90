// The one zlib inflate loop of the formats library (private): ELF sections compressed with zlib (SHF_COMPRESSED,
// legacy .zdebug_*) and gzip-compressed reports, members one after another.
//
// zlib counts input and output in 32-bit units; an Inflater takes input and output of any size and hands them to
// zlib in steps it can count, owns the z_stream (set up and torn down once), and says what zlib's return codes mean.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sampler {

class Inflater {
 public:
  enum class Format {
    kZlib,  ///< RFC 1950: what SHF_COMPRESSED and .zdebug sections hold
    kGzip,  ///< RFC 1952: the wrapper checked (CRC and length), as gzip(1) writes reports
  };
  explicit Inflater(Format format);
  ~Inflater();
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  /// False if zlib could not be set up; inflate() then fails with "cannot initialise zlib".
  bool ready() const { return ready_; }

  /// Gives more input, any size; it must stay valid until consumed. Call when input_left() is 0.
  void add_input(const void* data, size_t size);
  /// Input given and not yet consumed.
  uint64_t input_left() const { return stream_.avail_in + pending_size_; }
  /// The first unconsumed input bytes that are contiguous (empty when input_left() is 0).
  std::string_view peek() const;
  /// Compressed bytes consumed so far (for messages: "near compressed byte N").
  uint64_t consumed() const { return fed_ - stream_.avail_in; }

  enum class Status {
    kProgress,   ///< zlib made progress (produced output or consumed input)
    kEnd,        ///< the stream (a gzip member) ended
    kNeedInput,  ///< no progress is possible without more input (zlib's Z_BUF_ERROR with room for output)
    kError,      ///< corrupt data or no memory: error() says which
  };
  struct Step {
    Status status;
    size_t produced;  ///< bytes written to the output
  };
  /// Inflates into out[0, size) (at most 1 GiB of it per call).
  Step inflate(char* out, size_t size);
  /// Starts the next stream (a gzip member after another).
  void reset();
  /// What went wrong at the last kError: "out of memory while decompressing", or zlib's message.
  std::string error() const;

 private:
  z_stream stream_{};
  bool ready_ = false;
  int last_code_ = Z_OK;
  const unsigned char* pending_ = nullptr;  // input given and not yet handed to zlib
  uint64_t pending_size_ = 0;
  uint64_t fed_ = 0;  // input handed to zlib so far
};

}  // namespace sampler
