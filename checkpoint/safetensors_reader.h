#pragma once
// Reads the safetensors format: an 8-byte little-endian header length, a JSON header that maps
// each tensor name to {dtype, shape, data_offsets}, then the raw data. Torch-free: the parser
// works on any byte buffer, so it can be fuzzed and unit-tested without files.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ps {

enum class SafetensorsDtype {
  kF64,
  kF32,
  kF16,
  kBF16,
  kI64,
  kI32,
  kI16,
  kI8,
  kU8,
  kBool,
  kF8E4M3,
  kF8E5M2
};

size_t dtype_size(SafetensorsDtype dtype);
const char* dtype_name(SafetensorsDtype dtype);  // as written in the header: "F32", "BF16", ...

struct SafetensorsTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::kF32;
  std::vector<int64_t> shape;
  // Absolute byte offsets into the file (the header's data_offsets plus the data start).
  uint64_t begin = 0;
  uint64_t end = 0;
  int64_t numel() const;
};

struct SafetensorsHeader {
  std::vector<SafetensorsTensor> tensors;  // in the order the header lists them
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // 8 + header length

  const SafetensorsTensor* find(std::string_view name) const;

 private:
  friend SafetensorsHeader parse_safetensors(std::span<const uint8_t>, const std::string&);
  std::unordered_map<std::string, size_t> index_;
};

// Parses and validates a whole safetensors file image: header length within the buffer, valid
// JSON, known dtypes, non-negative shapes, data_offsets that match numel * dtype size and lie
// inside the buffer. Throws std::runtime_error naming `origin` (and the tensor where one is at
// fault); never reads outside `file`.
SafetensorsHeader parse_safetensors(std::span<const uint8_t> file, const std::string& origin);

// A read-only memory map of a safetensors file, parsed on open.
class SafetensorsFile {
 public:
  // Throws std::runtime_error naming `path` when it cannot be opened or is malformed.
  static SafetensorsFile open(const std::string& path);

  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  ~SafetensorsFile();

  const std::string& path() const { return path_; }
  const SafetensorsHeader& header() const { return header_; }
  std::span<const uint8_t> bytes(const SafetensorsTensor& tensor) const;
  // madvise(MADV_DONTNEED) on the whole pages of [p, p + n) when that range lies in this
  // mapping (the pages are re-read from the file if touched again); false, doing nothing, when
  // it does not.
  bool release_pages(const void* p, size_t n) const;

 private:
  SafetensorsFile() = default;
  void unmap();

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  SafetensorsHeader header_;
};

}  // namespace ps
