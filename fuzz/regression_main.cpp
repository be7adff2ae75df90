// The regression runner: a main for a fuzz target's source in builds without libFuzzer (the ordinary gcc build).
//
// Usage: NAME_regress PATH...   each PATH is a file or a directory (its regular files, recursively, sorted).
// Every file is passed once to LLVMFuzzerTestOneInput, as libFuzzer would; a finding (a sanitizer report, a
// failed FUZZ_CHECK, a crash) ends the run abnormally, so ctest reports the test as failed. The seed corpus and
// the inputs of past findings (fuzz/corpus/NAME, fuzz/regressions/NAME) stay fixed in every test run this way.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path path(argv[i]);
    std::error_code error;
    if (fs::is_directory(path, error)) {
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else if (fs::is_regular_file(path, error)) {
      files.push_back(path);
    } else {
      std::fprintf(stderr, "%s: '%s': no such file or directory\n", argv[0], argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "%s: no input files (a regression run over nothing proves nothing)\n", argv[0]);
    return 2;
  }
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "%s: '%s': cannot read\n", argv[0], file.c_str());
      return 2;
    }
    // A copy of exactly the input's size, so that AddressSanitizer (in sanitizer builds) sees any read past it.
    // libFuzzer never passes a null pointer, even for the empty input.
    std::vector<uint8_t> data(bytes.begin(), bytes.end());
    static uint8_t empty;
    LLVMFuzzerTestOneInput(data.empty() ? &empty : data.data(), data.size());
  }
  std::printf("%zu inputs passed\n", files.size());
  return 0;
}
