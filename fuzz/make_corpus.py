#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets, fuzz/corpus/NAME/ (a developer tool: the files are committed).

The seeds follow the test data of tests/sections (the sampler manual's excerpts, the examples of the
Compact Backtrace and Symbolizer Markup Formats, ELF fixtures like elf_test's, made here with yaml2obj-19, zlib and
zstd). Each corpus stays a few KB: libFuzzer needs a foothold in each format, not volume. Usage: fuzz/make_corpus.py
(rewrites every corpus directory).
"""
import base64
import gzip
import os
import shutil
import struct
import subprocess
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
UNIT_A = "0123456789abcdef0123456789abcdef"
UNIT_B = "fedcba9876543210fedcba9876543210"


def write(target, name, data):
    directory = os.path.join(HERE, "corpus", target)
    os.makedirs(directory, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(directory, name), "wb") as out:
        out.write(data)


# ---- site information (sampler manual, "Site Information")
SITES = (f'<sites unit="{UNIT_A}" scheme="branches">\n'
         "ccrypt.c\t120\tmain\t4\tx > 0\n"
         "ccrypt.c\t131\tmain\t7\tlen == 0\n"
         "</sites>\n"
         f'<sites unit="{UNIT_B}" scheme="returns">\n'
         "io.c\t33\tread_all\t2\tread\n"
         "</sites>\n")
SITES_MORE = (f"<sites scheme='bounds' unit='{UNIT_A}'>\n"
              "a.c\t1\tf\t0\tint\tx\tlocal\n"
              "</sites>\n\0\0\0"
              f'<sites unit="{UNIT_B}" scheme="scalar-pairs">\r\n'
              "&lt;built-in&gt;\t7\tg\t1\tx\tint\ty\tlocal\tconst\r\n"
              "</sites>\r\n"
              f'<sites unit="{UNIT_A}" scheme="my-&quot;scheme&quot;"/>\n'
              f'<sites unit="{UNIT_A}" scheme="float-kinds">\n'
              "f.c\t9\th\t3\td\tdouble\tlocal\n")
SITES_BAD = ('<sites unit="0123" scheme="branches">\n'
             "x\n</sites>\n"
             "junk outside\n"
             f'<sites unit="{UNIT_A}">\n</sites>\n'
             "<sites unit=\"&#x30;&#48;\" scheme=\"atoms\"\n"
             "</sites>\n")


def site_info():
    write("site_info", "manual.sites", SITES)
    write("site_info", "padding_crlf_entities.sites", SITES_MORE)
    write("site_info", "errors.sites", SITES_BAD)
    write("site_info", "empty", "")


# ---- reports (sampler manual, "Dynamic Feedback Reports", docs/formats.md section 3)
REPORT = (f'<report id="samples">\n'
          f'<samples unit="{UNIT_A}" scheme="branches">\n0\t4\n12\t0\n</samples>\n'
          f'<samples unit="{UNIT_B}" scheme="returns">\n1\t0\t3\n</samples>\n'
          f'<timestamps unit="{UNIT_A}" scheme="branches" when="first">\n17\n0\n</timestamps>\n'
          "</report>\n"
          '<report id="main-backtrace">\n'
          "ccrypt[0x804ff1c]\n"
          "/lib/tls/libc.so.6(__libc_start_main+0xd3)[0xa94e23]\n"
          "</report>\n")
CUT = (f'<report id="samples">\r\n<samples unit="{UNIT_A}" scheme="bounds">\r\n-3\t0x10\r\n'
       f'</samples>\r\n<timestamps when="last" scheme="bounds" unit="{UNIT_A}">\r\n5\r\n')
BARE = (f'<samples unit="{UNIT_A}" scheme="branches">\n3\t4\n5\t6\n</samples>\n'
        f'<samples unit="{UNIT_A}" scheme="branches">\n1\t1\n')
BAD_REPORT = ("text before\n<report>\nx\n</report>\n</report>\n<report id='a' id='b'>\n<report id=\"x\"/>\n"
              "<report id=\"samples\">\n<samples unit=\"zz\" scheme=\"s\">\n</timestamps>\n<samples>\n")


def report():
    write("report", "manual.report", REPORT)
    write("report", "cut_short_crlf.report", CUT)
    write("report", "bare_samples", BARE)
    write("report", "errors.report", BAD_REPORT)
    write("report", "manual.report.gz", gzip.compress(REPORT.encode(), mtime=0))
    write("report", "cut.report.gz", gzip.compress(CUT.encode(), mtime=0)[:-9])


# ---- Compact Backtrace Format: information byte = version 0 << 2 | size; pc 0x1-, ra 0x2-, async 0x3-, a bit 0x08
def cbf_address(kind, absolute, value_bytes):
    return bytes([(kind << 4) | (0x08 if absolute else 0) | (len(value_bytes) - 1)]) + value_bytes


def cbf_stacks():
    pc, ra, asy = 1, 2, 3
    stacks = {
        # 64-bit: absolute pc, two ra deltas, rep 3 inline, omit 40 external, trunc
        "stack64": bytes([2]) + cbf_address(pc, True, bytes.fromhex("00007f12345678")) +
                   cbf_address(ra, False, bytes.fromhex("ff10")) + cbf_address(ra, False, bytes.fromhex("20")) +
                   bytes([0x80 | 2]) + bytes([0x60, 40]) + cbf_address(asy, True, bytes.fromhex("4010")) + bytes([1]),
        # 32-bit: absolute, negative delta, rep external count, end
        "stack32": bytes([1]) + cbf_address(pc, True, bytes.fromhex("0804ff1c")) +
                   cbf_address(ra, False, bytes.fromhex("fe")) + bytes([0x88 | 1, 0x01, 0x00]) + bytes([0]),
        # 16-bit: omit inline, no end (allowed: the length is known)
        "stack16": bytes([0]) + cbf_address(ra, True, bytes.fromhex("1234")) + bytes([0x40 | 4]) +
                   cbf_address(pc, False, bytes.fromhex("01")),
        "rep_first": bytes([2, 0x81, 0]),
        "relative_first": bytes([2, 0x10, 0x01, 0]),
        "reserved": bytes([3]),
    }
    for name, data in stacks.items():
        write("cbf", name, data)
    return stacks


# ---- symbolizer markup (Symbolizer Markup Format)
MARKUP = ("{{{reset}}}\n"
          "{{{module:0:/usr/bin/ccrypt:elf:0123456789abcdef}}}\n"
          "{{{mmap:0x400000:0x2000:load:0:rx:0x0}}}\n"
          "{{{mmap:0x7f0000001000:4096:load:1:RW:0x1000}}}\n"
          "frame {{{bt:0:0x401234:pc}}} then {{{bt:1:0x0401ff:ra}}} {{{pc:0x12}}}\n"
          "{{{{pc:00}}}}} {{{bt:2:0x1}}} {{{mmap:0x1:010:load:0x0:x:0}}}\n"
          "{{{module:1:a}b:elf:abc}}} {{{dumpfile:x:y}}} {{{ bad }}} {{{}}}\n")


def markup():
    lines = MARKUP.splitlines(keepends=True)
    write("markup", "contextual", "".join(lines[:4]))
    write("markup", "elements", "".join(lines[4:]))


# ---- base64 (RFC 4648)
def base64_corpus(stacks):
    write("base64", "cbf64", base64.b64encode(stacks["stack64"]))
    write("base64", "padded1", "Zg==")
    write("base64", "padded2", "Zm8=")
    write("base64", "noncanonical", "Zh==")
    write("base64", "bad", "Zm9v\nYmFy=")
    write("base64", "binary", bytes(range(0, 256, 7)))


# ---- main-backtrace bodies (docs/formats.md section 3) for the renderer
def backtrace(stacks):
    cbf64 = base64.b64encode(stacks["stack64"]).decode()
    cbf32 = base64.b64encode(stacks["stack32"]).decode()
    body = ("{{{reset}}}\n{{{module:0:/usr/bin/demo:elf:8f3a2b}}}\n{{{mmap:0x555555554000:0x1000:load:0:r:0x0}}}\n"
            "{{{mmap:0x555555555000:0x2000:load:0:rx:0x1000}}}\n/usr/lib/nobuildid.so 0x7f0000-0x7f1000\n"
            f"signal:11:SIGSEGV:0x10\ncbf:{cbf64}\n")
    write("backtrace", "report", f'<report id="samples">\n</report>\n<report id="main-backtrace">\n{body}</report>\n')
    write("backtrace", "bare_bodies", body + f"signal:6:SIGABRT\ncbf:{cbf32}\n")
    write("backtrace", "legacy", "ccrypt[0x804ff1c]\n/lib/tls/libc.so.6(__libc_start_main+0xd3)[0xa94e23]\n"
                                 "./prog(+0x1234) [0x5555]\n")
    write("backtrace", "bad", "signal:x\ncbf:AA=\ncbf:@@@@\n{{{mmap:0x1:0:load:0:q:0}}}\n"
                              f'<report id="main-backtrace">\ncbf:{cbf64[:-3]}\n')


# ---- samples joined with sites (resolve): sites text, "%%", samples
def resolve():
    write("resolve", "manual", SITES + "%%\n" + REPORT)
    write("resolve", "bounds_timestamps",
          SITES_MORE + "%%\n" +
          f'<samples unit="{UNIT_A}" scheme="bounds">\n-3\t0x10\n</samples>\n'
          f'<samples unit="{UNIT_A}" scheme="bounds">\n18446744073709551615\t-9223372036854775808\n</samples>\n'
          f'<timestamps unit="{UNIT_B}" scheme="scalar-pairs" when="first">\n0\n</timestamps>\n'
          f'<timestamps unit="{UNIT_B}" scheme="scalar-pairs" when="first">\n4\n</timestamps>\n')
    write("resolve", "mismatch", SITES + "%%\n" +
          f'<samples unit="{UNIT_A}" scheme="branches">\n1\t2\n</samples>\n'
          f'<samples unit="{UNIT_B}" scheme="returns">\n1\tx\t3\n</samples>\n'
          f'<samples unit="{UNIT_B}" scheme="nope">\n1\n</samples>\n')


# ---- ELF images (docs/tools.md): yaml2obj-19 like tests/sections/elf_test.cpp
def yaml2obj():
    for candidate in ("yaml2obj-19", "/usr/lib/llvm-19/bin/yaml2obj", "yaml2obj"):
        if shutil.which(candidate):
            return candidate
    raise SystemExit("make_corpus.py: yaml2obj-19 not found (Debian package llvm-19)")


def elf(work):
    tool = yaml2obj()
    payload = SITES.encode()

    def image(name, content, flags="", data="ELFDATA2LSB", klass="ELFCLASS64", machine="EM_X86_64",
              section=".debug_site_info"):
        text = (f"--- !ELF\nFileHeader:\n  Class: {klass}\n  Data: {data}\n  Type: ET_REL\n  Machine: {machine}\n"
                f"Sections:\n  - Name: {section}\n    Type: SHT_PROGBITS\n{flags}    Content: \"{content.hex()}\"\n"
                "  - Name: .bss\n    Type: SHT_NOBITS\n    Size: 16\n")
        path = os.path.join(work, name)
        with open(path + ".yaml", "w") as out:
            out.write(text)
        subprocess.run([tool, path + ".yaml", "-o", path], check=True)
        with open(path, "rb") as f:
            return f.read()

    def zstd(data):
        return subprocess.run(["zstd", "-q", "-c", "-19"], input=data, stdout=subprocess.PIPE, check=True).stdout

    compressed = "    Flags: [ SHF_COMPRESSED ]\n"
    images = {
        "plain64le.o": image("plain64le.o", payload[:80] + b"\0\0"),
        "zlib64le.o": image("zlib64le.o", struct.pack("<IIQQ", 1, 0, len(payload), 1) + zlib.compress(payload),
                            compressed),
        "zstd32be.o": image("zstd32be.o", struct.pack(">III", 2, len(payload), 1) + zstd(payload), compressed,
                            "ELFDATA2MSB", "ELFCLASS32", "EM_MIPS"),
        "zdebug32le.o": image("zdebug32le.o", b"ZLIB" + struct.pack(">Q", len(payload)) + zlib.compress(payload), "",
                              "ELFDATA2LSB", "ELFCLASS32", "EM_386", ".zdebug_site_info"),
        "empty64be.o": image("empty64be.o", b"\0" * 8, "", "ELFDATA2MSB", "ELFCLASS64", "EM_PPC64"),
    }
    for name, data in images.items():
        write("elf", name, data)
    # An ar archive of two members (ar(5): global header, 60-byte member headers, even padding).
    archive = b"!<arch>\n"
    for name in ("plain64le.o", "zlib64le.o"):
        data = images[name]
        archive += f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{644:<8}{len(data):<10}`\n".encode() + data
        if len(data) % 2:
            archive += b"\n"
    write("elf", "two_members.a", archive)


# ---- GSYM (GSYM format): llvm-gsymutil-19's conversion of a small -O2 -g program with inlined calls, its header
# alone and a truncated copy.
GSYM_SOURCE = """
static int depth;
static inline __attribute__((always_inline)) int leaf(int x) { depth += x; return x * 3; }
static inline __attribute__((always_inline)) int middle(int x) { return leaf(x + 1) + leaf(x - 1); }
__attribute__((noinline)) int top(int x) { return middle(x) * 2 + depth; }
int main(int argc, char **argv) { (void)argv; return top(argc); }
"""


def gsym(work):
    source = os.path.join(work, "g.c")
    with open(source, "w") as out:
        out.write(GSYM_SOURCE)
    binary = os.path.join(work, "g")
    subprocess.run(["gcc", "-O2", "-g", "-o", binary, source], check=True)
    subprocess.run(["llvm-gsymutil-19", "--convert", binary, "--out-file", binary + ".gsym"], check=True,
                   stdout=subprocess.DEVNULL)
    with open(binary + ".gsym", "rb") as data:
        whole = data.read()
    write("gsym", "small.gsym", whole)
    write("gsym", "header_only.gsym", whole[:48])
    write("gsym", "truncated.gsym", whole[:len(whole) * 2 // 3])


def main():
    for target in ("site_info", "report", "cbf", "markup", "base64", "elf", "backtrace", "resolve", "gsym"):
        shutil.rmtree(os.path.join(HERE, "corpus", target), ignore_errors=True)
    site_info()
    report()
    stacks = cbf_stacks()
    markup()
    base64_corpus(stacks)
    backtrace(stacks)
    resolve()
    with tempfile.TemporaryDirectory() as work:
        elf(work)
        gsym(work)


if __name__ == "__main__":
    main()
