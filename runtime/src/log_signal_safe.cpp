// The runtime's stderr messages (see log.h). Signal-safe: a stack buffer, one raw write(2), SIGPIPE held off.
#include "log.h"

#include "raw_syscall.h"
#include "sections/core/char_buffer.h"

namespace sampler::runtime {

bool g_verbose = false;

void print_line(const char* const* parts, size_t count) {
  char storage[1024];
  CharBuffer line(storage, sizeof storage - 1);
  line.append("sampler: ");
  // One line whatever the parts hold: a control character (a newline in an environment value) is shown as '?'.
  for (size_t i = 0; i < count; ++i) {
    if (parts[i] == nullptr) continue;
    for (const char* p = parts[i]; *p != '\0'; ++p) {
      line.append(static_cast<unsigned char>(*p) < 0x20 || *p == 0x7f ? '?' : *p);
    }
  }
  // A message longer than the buffer is cut, but always ends its line.
  size_t size = line.size();
  storage[size++] = '\n';
  // Standard error may be a pipe whose reader has gone: the message is lost, the program must not be.
  sys::SigpipeGuard guard;
  sys::write_all(2, storage, size);
}

void say(const char* a, const char* b, const char* c, const char* d, const char* e, const char* f) {
  const char* parts[] = {a, b, c, d, e, f};
  print_line(parts, 6);
}

}  // namespace sampler::runtime
