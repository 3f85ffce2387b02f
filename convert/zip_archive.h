#pragma once
// Reads the zip archives torch.save writes (format 1.6+): a memory map of the file, the central
// directory parsed once, and each record's bytes as a span into the map. Only what torch.save
// produces is supported: stored (uncompressed) entries, zip64 sizes and offsets for large
// files. Torch-free, so `pagedserve convert` and serving's `--lora x.pth` need no libtorch;
// tests check it against files written by Python's torch.save (tests/convert).
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>

namespace ps {

class ZipArchive {
 public:
  // Throws std::runtime_error naming `path` when the file cannot be mapped, is not a zip, or a
  // directory entry points outside the file or uses compression.
  explicit ZipArchive(const std::string& path);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  // The name of the archive's top folder ("archive" for torch.save("archive.pth")): torch.save
  // puts every record under one folder named after the file.
  const std::string& prefix() const { return prefix_; }
  // A record under the prefix ("data.pkl", "data/0"); nullptr-free: has() first.
  bool has(const std::string& record) const;
  std::span<const uint8_t> read(const std::string& record) const;

 private:
  struct Entry {
    uint64_t offset = 0;  // of the data in the file
    uint64_t size = 0;
  };
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string prefix_;
  std::unordered_map<std::string, Entry> entries_;  // full names
};

}  // namespace ps
