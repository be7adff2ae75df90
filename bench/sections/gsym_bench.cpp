// GSYM lookups in-process (sections/gsym.h): addresses per second over a mapped file, without process start-up
// or output. Usage: gsym_bench FILE.gsym ADDRESSES [ROUNDS]   (ADDRESSES: one hexadecimal address per line)
// Prints "gsym lookups: N addresses x R rounds, S s, L lookups/s, F frames/address".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "sections/gsym.h"

int main(int argc, char** argv) {
  using namespace sampler;
  if (argc < 3) {
    std::fprintf(stderr, "usage: gsym_bench FILE.gsym ADDRESSES [ROUNDS]\n");
    return 2;
  }
  gsym::Error error;
  auto file = gsym::MappedFile::open(argv[1], error);
  if (!file) {
    std::fprintf(stderr, "gsym_bench: %s: byte %llu: %s\n", argv[1], static_cast<unsigned long long>(error.offset),
                 error.message.c_str());
    return 1;
  }
  std::vector<uint64_t> addresses;
  std::ifstream in(argv[2]);
  for (std::string line; std::getline(in, line);) addresses.push_back(std::strtoull(line.c_str(), nullptr, 16));
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  gsym::LookupResult result;
  gsym::LineTableCache cache;  // as resolve-backtrace --symbols and sampler-symbols lookup use it
  size_t frames = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < rounds; ++r) {
    for (uint64_t a : addresses) {
      if (file->reader().lookup(a, result, error, &cache) == gsym::Found::kYes) frames += result.frames.size();
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double lookups = static_cast<double>(addresses.size()) * rounds;
  std::printf("gsym lookups: %zu addresses x %d rounds, %.3f s, %.0f lookups/s, %.2f frames/address\n",
              addresses.size(), rounds, seconds, lookups / seconds, static_cast<double>(frames) / lookups);
  return 0;
}
