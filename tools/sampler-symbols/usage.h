// sampler-symbols' options and --help, shared by its two executables (main.cpp, convert_main.cpp): both parse
// the same command line, so the one that runs the command sees exactly what the user typed.
#pragma once

#include <array>

#include "tool.h"

namespace sampler::symbols_tool {

inline constexpr std::array kOptions = {
    sampler::tool::Option{"output", 'o', "DIR", "write DIR/BUILDID.gsym (default: the current directory)"},
    sampler::tool::Option{"symbfile", 0, nullptr,
                          "also write DIR/BUILDID.ranges.symbfile and DIR/BUILDID.returnpads.symbfile "
                          "(symbfile format)"},
    sampler::tool::Option{"debug-dir", 0, "DIR",
                          "look up separate debug files as DIR/.build-id/xx/rest.debug (default /usr/lib/debug)"},
    sampler::tool::Option{"url", 0, "URL", "push: the collector (http://HOST:PORT)"},
    sampler::tool::Option{"api-key", 0, "KEY", "push: an API key allowed to push symbols (default: $SAMPLER_API_KEY)"},
    sampler::tool::Option{"part-size", 0, "BYTES",
                          "push: send files in parts of at most BYTES (default 1048576; the collector's --max-body "
                          "bounds it)"},
    sampler::tool::Option{"verbose", 'v', nullptr, "push: print the collector's answer to each file"},
};

inline constexpr sampler::tool::Usage kUsage = {
    "sampler-symbols",
    "gsym [-o DIR] [--symbfile] FILE... | lookup GSYM [ADDRESS...] | push --url URL --api-key KEY FILE...",
    "Write a GSYM symbol file, named by build ID, for each ELF FILE from its DWARF debug information.",
    kOptions,
    "gsym: each FILE (executable or shared library, with DWARF or with a separate debug file found by its build\n"
    "ID) gives DIR/BUILDID.gsym: functions, source files and lines, and inlined calls, which\n"
    "resolve-backtrace --symbols DIR and llvm-gsymutil read. Function symbols without DWARF are kept by name.\n"
    "A file without a build ID, or that cannot be read, gets an error; the other files are still processed.\n"
    "\n"
    "lookup: prints the frames of each hexadecimal ADDRESS (or of each line of standard input) as\n"
    "llvm-symbolizer --no-demangle does, without columns: NAME and FILE:LINE per frame, innermost first.\n"
    "\n"
    "push: uploads the symbols of each FILE to a collector (sampler-collector serve), which symbolizes the crash\n"
    "stacks it stores with them: for an ELF file, its GSYM file and both symbfiles (ranges, return pads), made\n"
    "in memory; files written by 'gsym' (BUILDID.gsym, BUILDID.ranges.symbfile, BUILDID.returnpads.symbfile)\n"
    "are sent as they are. Each goes to POST URL/api/symbols-gsym, -ranges or -returnpads in parts (headers\n"
    "FileID: the build ID in base64url, FilePart, FileParts; Authorization: APIKey KEY). A file the collector\n"
    "refuses is named on stderr with its answer; the others are still sent. Exit status 1 if any failed.\n",
};

}  // namespace sampler::symbols_tool
