#include "convert/zip_archive.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ps {
namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;

uint16_t u16(const uint8_t* p) {
  return uint16_t(p[0] | (p[1] << 8));
}
uint32_t u32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
uint64_t u64(const uint8_t* p) {
  return uint64_t(u32(p)) | (uint64_t(u32(p + 4)) << 32);
}

}  // namespace

ZipArchive::ZipArchive(const std::string& path) : path_(path) {
  auto fail = [&](const std::string& why) -> void {
    throw std::runtime_error(path + ": not a readable torch.save archive: " + why);
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < 22) {
    ::close(fd);
    fail("too short for a zip archive");
  }
  size_ = size_t(st.st_size);
  void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) throw std::runtime_error(path + ": cannot map the file");
  data_ = static_cast<const uint8_t*>(m);
  try {
    // The end-of-directory record sits in the last 22 + 65535 (comment) bytes.
    int64_t eocd = -1;
    const int64_t lowest = std::max<int64_t>(0, int64_t(size_) - 22 - 65535);
    for (int64_t i = int64_t(size_) - 22; i >= lowest; --i) {
      if (u32(data_ + i) == kEndOfDirectory) {
        eocd = i;
        break;
      }
    }
    if (eocd < 0) fail("no end-of-central-directory record");
    uint64_t count = u16(data_ + eocd + 10);
    uint64_t dir_size = u32(data_ + eocd + 12);
    uint64_t dir_offset = u32(data_ + eocd + 16);
    if (eocd >= 20 && u32(data_ + eocd - 20) == kZip64Locator) {
      const uint64_t z64 = u64(data_ + eocd - 20 + 8);
      if (z64 + 56 > size_ || u32(data_ + z64) != kZip64EndOfDirectory) {
        fail("bad zip64 end-of-directory record");
      }
      count = u64(data_ + z64 + 32);
      dir_size = u64(data_ + z64 + 40);
      dir_offset = u64(data_ + z64 + 48);
    }
    if (dir_offset > size_ || dir_size > size_ - dir_offset) fail("central directory out of range");
    const uint8_t* p = data_ + dir_offset;
    const uint8_t* end = p + dir_size;
    for (uint64_t n = 0; n < count; ++n) {
      if (end - p < 46 || u32(p) != kDirectoryEntry) fail("malformed central directory");
      const uint16_t method = u16(p + 10);
      uint64_t csize = u32(p + 20), usize = u32(p + 24);
      const uint16_t name_len = u16(p + 28), extra_len = u16(p + 30), comment_len = u16(p + 32);
      uint64_t local = u32(p + 42);
      if (end - p < 46 + int64_t(name_len) + extra_len + comment_len) {
        fail("malformed central directory");
      }
      const std::string name(reinterpret_cast<const char*>(p + 46), name_len);
      // zip64 extra field: the 64-bit values, in this order, for those stored as 0xFFFFFFFF.
      const uint8_t* x = p + 46 + name_len;
      const uint8_t* xend = x + extra_len;
      while (xend - x >= 4) {
        const uint16_t id = u16(x), len = u16(x + 2);
        if (xend - x - 4 < len) break;
        if (id == 0x0001) {
          const uint8_t* v = x + 4;
          const uint8_t* vend = v + len;
          if (usize == 0xFFFFFFFFu && vend - v >= 8) usize = u64(v), v += 8;
          if (csize == 0xFFFFFFFFu && vend - v >= 8) csize = u64(v), v += 8;
          if (local == 0xFFFFFFFFu && vend - v >= 8) local = u64(v), v += 8;
        }
        x += 4 + len;
      }
      if (method != 0) fail("record " + name + " is compressed (torch.save stores records)");
      if (csize != usize) fail("record " + name + " has differing sizes");
      if (local > size_ || size_ - local < 30 || u32(data_ + local) != kLocalHeader) {
        fail("record " + name + " has no local header");
      }
      const uint64_t start = local + 30 + u16(data_ + local + 26) + u16(data_ + local + 28);
      if (start > size_ || usize > size_ - start) fail("record " + name + " runs past the file");
      entries_[name] = Entry{start, usize};
      if (prefix_.empty()) {
        const size_t slash = name.find('/');
        if (slash != std::string::npos) prefix_ = name.substr(0, slash);
      }
      p += 46 + name_len + extra_len + comment_len;
    }
    if (entries_.empty()) fail("the archive is empty");
  } catch (...) {
    ::munmap(const_cast<uint8_t*>(data_), size_);
    throw;
  }
}

ZipArchive::~ZipArchive() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

bool ZipArchive::has(const std::string& record) const {
  return entries_.count(prefix_ + "/" + record) > 0;
}

std::span<const uint8_t> ZipArchive::read(const std::string& record) const {
  const auto it = entries_.find(prefix_ + "/" + record);
  if (it == entries_.end()) {
    throw std::runtime_error(path_ + ": record " + record + " is missing from the archive");
  }
  return {data_ + it->second.offset, size_t(it->second.size)};
}

}  // namespace ps
