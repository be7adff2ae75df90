// The build IDs the outcome subreport lists: the program's and those of the instrumented libraries it loads.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sampler::launcher {

/// The GNU build ID of the ELF file at `path`, in hex, or "" without one.
std::string read_build_id(const std::string& path);

/// The instrumented libraries `program` loads at start-up with environment `envp`: (path, build ID in hex or "")
/// of each shared object the dynamic loader maps for it (as ldd lists them) that carries site information
/// (.debug_site_info). Libraries the program dlopen()s later are not known. Remembered in `cache_dir` (none when
/// empty) per program and LD_LIBRARY_PATH, and used again while the program and those libraries are unchanged.
std::vector<std::pair<std::string, std::string>> instrumented_libraries(const std::string& program,
                                                                        char* const* envp,
                                                                        const std::string& cache_dir);

}  // namespace sampler::launcher
