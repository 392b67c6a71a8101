// fatbin_archs: lists the GPU code a CUDA program or library carries, one line per entry of its
// fat binaries ("elf sm_90", "ptx sm_90"), sorted and without repeats, as cuobjdump --list-elf
// and --list-ptx do. The test command runs it on a program of the CUDA stage to show that the
// build holds machine code for the architecture it was asked for; this machine has no cuobjdump
// (the GPU kit's run.sh compares both where cuobjdump exists).
//   fatbin_archs <ELF file> [--expect=sm_90]
// Exit 0 when the file has fat binaries (and, with --expect, machine code for that
// architecture), 1 otherwise, 2 on a file it cannot read.
//
// The layout read here: the ELF section .nv_fatbin holds fat binaries back to back, each a
// 16-byte header (magic 0xBA55ED50, version, the header's size, the size of the entries that
// follow) and entries, each a header (kind 1 = PTX, 2 = ELF; its own size; the payload's size;
// the architecture as major * 10 + minor at byte 28) followed by its payload.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

template <class T>
bool read_at(const std::vector<unsigned char>& bytes, std::uint64_t offset, T& value) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return true;
}

struct section {
  std::uint64_t offset = 0, size = 0;
};

// The .nv_fatbin section of a little-endian ELF64 file, or an empty section.
section find_fatbin(const std::vector<unsigned char>& elf) {
  if (elf.size() < 64 ||
      std::memcmp(elf.data(),
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      elf[4] != 2)
    return {};
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!read_at(elf, 0x28, shoff) || !read_at(elf, 0x3a, shentsize) || !read_at(elf, 0x3c, shnum) ||
      !read_at(elf, 0x3e, shstrndx) || shentsize < 64 || shstrndx >= shnum)
    return {};
  auto header = [&](std::uint16_t i, std::uint32_t& name, section& s) {
    const std::uint64_t at = shoff + std::uint64_t{i} * shentsize;
    return read_at(elf, at, name) && read_at(elf, at + 0x18, s.offset) && read_at(elf, at + 0x20, s.size);
  };
  std::uint32_t unused = 0;
  section names;
  if (!header(shstrndx, unused, names)) return {};
  for (std::uint16_t i = 0; i < shnum; ++i) {
    std::uint32_t name = 0;
    section s;
    if (!header(i, name, s) || names.offset + name >= elf.size()) continue;
    const char* text = reinterpret_cast<const char*>(elf.data() + names.offset + name);
    const std::size_t room = elf.size() - (names.offset + name);
    if (std::string_view(text, strnlen(text, room)) == ".nv_fatbin" && s.offset + s.size <= elf.size()) return s;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && !std::string_view(argv[2]).starts_with("--expect="))) {
    std::fprintf(stderr, "usage: %s <ELF file> [--expect=sm_XY]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fatbin_archs: cannot read %s\n", argv[1]);
    return 2;
  }
  const std::vector<unsigned char> elf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const section fatbin = find_fatbin(elf);
  if (fatbin.size == 0) {
    std::fprintf(stderr, "fatbin_archs: %s has no .nv_fatbin section (no GPU code)\n", argv[1]);
    return 1;
  }
  std::set<std::string> lines;
  std::uint64_t at = fatbin.offset;
  const std::uint64_t end = fatbin.offset + fatbin.size;
  while (at + 16 <= end) {
    std::uint32_t magic = 0;
    std::uint16_t header_size = 0;
    std::uint64_t entries_size = 0;
    read_at(elf, at, magic);
    if (magic != 0xBA55ED50u) {  // fat binaries are 8-byte aligned; skip padding
      at += 8;
      continue;
    }
    read_at(elf, at + 6, header_size);
    read_at(elf, at + 8, entries_size);
    std::uint64_t entry = at + header_size;
    const std::uint64_t entries_end = std::min(end, entry + entries_size);
    while (entry + 32 <= entries_end) {
      std::uint16_t kind = 0;
      std::uint32_t entry_header = 0, arch = 0;
      std::uint64_t payload = 0;
      read_at(elf, entry, kind);
      read_at(elf, entry + 4, entry_header);
      read_at(elf, entry + 8, payload);
      read_at(elf, entry + 28, arch);
      if (entry_header == 0) break;
      if (kind == 1 || kind == 2)
        lines.insert(std::string(kind == 1 ? "ptx" : "elf") + " sm_" + std::to_string(arch));
      entry += entry_header + payload;
    }
    at = std::max(entries_end, at + 16);
  }
  for (const auto& line : lines) std::printf("%s\n", line.c_str());
  if (argc == 3) {
    const std::string wanted = "elf " + std::string(std::string_view(argv[2]).substr(9));
    if (!lines.contains(wanted)) {
      std::fprintf(stderr, "fatbin_archs: %s has no machine code for %s\n", argv[1], wanted.c_str() + 4);
      return 1;
    }
  }
  return lines.empty() ? 1 : 0;
}
