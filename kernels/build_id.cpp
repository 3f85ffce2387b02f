#include "kernels/build_id.h"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace ps {
namespace {

struct Search {
  uintptr_t addr = 0;  // an address inside the object we want: this file's code
  std::string id;
};

bool contains(const dl_phdr_info& info, uintptr_t addr) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    const uintptr_t lo = info.dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && addr >= lo && addr < lo + ph.p_memsz) return true;
  }
  return false;
}

// The NT_GNU_BUILD_ID note's bytes in hex, from the object's PT_NOTE segments.
std::string note_id(const dl_phdr_info& info) {
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(info.dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) h;
      std::memcpy(&h, p, sizeof(h));
      const uint8_t* name = p + sizeof(h);
      const uint8_t* desc = name + ((h.n_namesz + 3) & ~3u);
      const uint8_t* next = desc + ((h.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        std::string hex;
        for (uint32_t b = 0; b < h.n_descsz; ++b) {
          hex += kHex[desc[b] >> 4];
          hex += kHex[desc[b] & 15];
        }
        return hex;
      }
      p = next;
    }
  }
  return "";
}

int visit(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<Search*>(data);
  if (!contains(*info, s->addr)) return 0;
  s->id = note_id(*info);
  return 1;  // found the object: stop
}

}  // namespace

std::string build_id() {
  static const std::string id = [] {
    Search s;
    s.addr = reinterpret_cast<uintptr_t>(&visit);
    dl_iterate_phdr(visit, &s);
    return s.id.empty() ? std::string("unknown") : s.id;
  }();
  return id;
}

}  // namespace ps
