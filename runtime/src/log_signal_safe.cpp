// The runtime's stderr messages (see log.h). Signal-safe: a stack buffer and one raw write(2).
#include "log.h"

#include "raw_syscall.h"
#include "sections/core/char_buffer.h"

namespace sampler::runtime {

bool g_verbose = false;

void print_line(const char* const* parts, size_t count) {
  char storage[1024];
  CharBuffer line(storage, sizeof storage - 1);
  line.append("sampler: ");
  for (size_t i = 0; i < count; ++i) {
    if (parts[i] != nullptr) line.append(parts[i]);
  }
  // A message longer than the buffer is cut, but always ends its line.
  size_t size = line.size();
  storage[size++] = '\n';
  sys::write_all(2, storage, size);
}

void say(const char* a, const char* b, const char* c, const char* d, const char* e, const char* f) {
  const char* parts[] = {a, b, c, d, e, f};
  print_line(parts, 6);
}

}  // namespace sampler::runtime
