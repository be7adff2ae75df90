// The formats library's zlib inflate loop (see inflater.h).
#include "inflater.h"

#include <algorithm>

namespace sampler {
namespace {

// zlib's counters are uInt: input and output go to it in steps of at most this.
constexpr uint64_t kStep = uint64_t{1} << 30;

}  // namespace

Inflater::Inflater(Format format) {
  // 16 + MAX_WBITS: expect a gzip wrapper (not raw deflate or zlib) and check its CRC and length.
  ready_ = (format == Format::kGzip ? inflateInit2(&stream_, 16 + MAX_WBITS) : inflateInit(&stream_)) == Z_OK;
}

Inflater::~Inflater() {
  if (ready_) inflateEnd(&stream_);
}

void Inflater::add_input(const void* data, size_t size) {
  pending_ = static_cast<const unsigned char*>(data);
  pending_size_ = size;
}

std::string_view Inflater::peek() const {
  if (stream_.avail_in > 0) return {reinterpret_cast<const char*>(stream_.next_in), stream_.avail_in};
  return {reinterpret_cast<const char*>(pending_), static_cast<size_t>(std::min(pending_size_, kStep))};
}

Inflater::Step Inflater::inflate(char* out, size_t size) {
  if (!ready_) {
    last_code_ = Z_STREAM_ERROR;
    return {Status::kError, 0};
  }
  if (stream_.avail_in == 0 && pending_size_ > 0) {
    const uint64_t piece = std::min(pending_size_, kStep);
    stream_.next_in = const_cast<unsigned char*>(pending_);
    stream_.avail_in = static_cast<uInt>(piece);
    pending_ += piece;
    pending_size_ -= piece;
    fed_ += piece;
  }
  const uInt room = static_cast<uInt>(std::min<uint64_t>(size, kStep));
  stream_.next_out = reinterpret_cast<Bytef*>(out);
  stream_.avail_out = room;
  last_code_ = ::inflate(&stream_, Z_NO_FLUSH);
  const size_t produced = room - stream_.avail_out;
  switch (last_code_) {
    case Z_OK:
      return {Status::kProgress, produced};
    case Z_STREAM_END:
      return {Status::kEnd, produced};
    case Z_BUF_ERROR:
      return {Status::kNeedInput, produced};
    default:
      return {Status::kError, produced};
  }
}

void Inflater::reset() {
  if (ready_) inflateReset(&stream_);
}

std::string Inflater::error() const {
  if (!ready_) return "cannot initialise zlib";
  if (last_code_ == Z_MEM_ERROR) return "out of memory while decompressing";
  return stream_.msg != nullptr ? stream_.msg : "error " + std::to_string(last_code_);
}

}  // namespace sampler
