#include "checkpoint/safetensors_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "checkpoint/tensor_errors.h"
#include "model/shape_string.h"

namespace ps {
namespace {

using json = nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host would need byte swaps");

// The reference implementation refuses headers over 100 MB; so do we, before allocating.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

struct DtypeInfo {
  const char* name;
  SafetensorsDtype dtype;
  size_t size;
};

constexpr DtypeInfo kDtypes[] = {
    {"F64", SafetensorsDtype::kF64, 8},        {"F32", SafetensorsDtype::kF32, 4},
    {"F16", SafetensorsDtype::kF16, 2},        {"BF16", SafetensorsDtype::kBF16, 2},
    {"I64", SafetensorsDtype::kI64, 8},        {"I32", SafetensorsDtype::kI32, 4},
    {"I16", SafetensorsDtype::kI16, 2},        {"I8", SafetensorsDtype::kI8, 1},
    {"U8", SafetensorsDtype::kU8, 1},          {"BOOL", SafetensorsDtype::kBool, 1},
    {"F8_E4M3", SafetensorsDtype::kF8E4M3, 1}, {"F8_E5M2", SafetensorsDtype::kF8E5M2, 1},
};

const DtypeInfo& info(SafetensorsDtype dtype) {
  for (const DtypeInfo& d : kDtypes) {
    if (d.dtype == dtype) return d;
  }
  throw std::logic_error("unknown SafetensorsDtype");
}

[[noreturn]] void fail(const std::string& origin, const std::string& message) {
  throw std::runtime_error(origin + ": " + message);
}

uint64_t get_u64(const json& v, const std::string& origin, const std::string& name,
                 const char* what) {
  if (!v.is_number_unsigned()) {
    // nlohmann stores non-negative integers as unsigned; anything else is negative or not an int.
    fail_tensor(origin, name,
                std::string(what) + " must be non-negative integers, got " + v.dump());
  }
  return v.get<uint64_t>();
}

SafetensorsTensor parse_entry(const std::string& name, const json& e, uint64_t data_size,
                              uint64_t data_start, const std::string& origin) {
  if (!e.is_object()) fail_tensor(origin, name, "header entry is not an object");
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!e.contains(key))
      fail_tensor(origin, name, std::string("header entry has no \"") + key + "\"");
  }
  SafetensorsTensor t;
  t.name = name;

  const json& dt = e.at("dtype");
  if (!dt.is_string()) fail_tensor(origin, name, "dtype is not a string: " + dt.dump());
  const std::string dtype = dt.get<std::string>();
  const DtypeInfo* found = nullptr;
  for (const DtypeInfo& d : kDtypes) {
    if (dtype == d.name) found = &d;
  }
  if (!found) fail_tensor(origin, name, "unknown dtype \"" + dtype + "\"");
  t.dtype = found->dtype;

  const json& shape = e.at("shape");
  if (!shape.is_array()) fail_tensor(origin, name, "shape is not an array: " + shape.dump());
  uint64_t numel = 1;
  for (const json& d : shape) {
    const uint64_t dim = get_u64(d, origin, name, "shape dimensions");
    if (dim > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(numel, dim, &numel)) {
      fail_tensor(origin, name, "shape " + shape.dump() + " overflows");
    }
    t.shape.push_back(static_cast<int64_t>(dim));
  }
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, found->size, &nbytes)) {
    fail_tensor(origin, name, "shape " + shape.dump() + " overflows");
  }

  const json& off = e.at("data_offsets");
  if (!off.is_array() || off.size() != 2) {
    fail_tensor(origin, name, "data_offsets must be [begin, end], got " + off.dump());
  }
  const uint64_t begin = get_u64(off[0], origin, name, "data_offsets");
  const uint64_t end = get_u64(off[1], origin, name, "data_offsets");
  if (end < begin) {
    fail_tensor(
        origin, name,
        "data_offsets end " + std::to_string(end) + " is before begin " + std::to_string(begin));
  }
  if (end - begin != nbytes) {
    fail_tensor(origin, name,
                "data_offsets span " + std::to_string(end - begin) + " bytes but " + dtype +
                    " shape " + shape_string(t.shape) + " needs " + std::to_string(nbytes));
  }
  if (end > data_size) {
    fail_tensor(origin, name,
                "data ends at byte " + std::to_string(data_start + end) +
                    " but the file has only " + std::to_string(data_start + data_size) +
                    " bytes (truncated?)");
  }
  t.begin = data_start + begin;
  t.end = data_start + end;
  return t;
}

}  // namespace

size_t dtype_size(SafetensorsDtype dtype) {
  return info(dtype).size;
}
const char* dtype_name(SafetensorsDtype dtype) {
  return info(dtype).name;
}

int64_t SafetensorsTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const SafetensorsTensor* SafetensorsHeader::find(std::string_view name) const {
  const auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &tensors[it->second];
}

SafetensorsHeader parse_safetensors(std::span<const uint8_t> file, const std::string& origin) {
  if (file.size() < 8) {
    fail(origin, "file is " + std::to_string(file.size()) +
                     " bytes, too short for the 8-byte header length");
  }
  uint64_t header_len = 0;
  std::memcpy(&header_len, file.data(), 8);
  const uint64_t available = file.size() - 8;
  if (header_len > available) {
    fail(origin, "header length " + std::to_string(header_len) +
                     " runs past the end of the file (" + std::to_string(file.size()) + " bytes)");
  }
  if (header_len > kMaxHeaderBytes) {
    fail(origin, "header length " + std::to_string(header_len) + " is over the 100 MB limit");
  }

  SafetensorsHeader h;
  h.data_start = 8 + header_len;
  const uint64_t data_size = file.size() - h.data_start;

  json j;
  try {
    const char* text = reinterpret_cast<const char*>(file.data() + 8);
    j = json::parse(text, text + header_len);
  } catch (const json::exception& e) {
    fail(origin, std::string("header is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) fail(origin, "header is not a JSON object");

  for (const auto& [name, entry] : j.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail(origin, "__metadata__ is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string())
          fail(origin, "__metadata__ value for \"" + key + "\" is not a string");
        h.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    h.index_.emplace(name, h.tensors.size());
    h.tensors.push_back(parse_entry(name, entry, data_size, h.data_start, origin));
  }
  return h;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail(path, std::string("cannot stat: ") + std::strerror(err));
  }
  f.size_ = static_cast<size_t>(st.st_size);
  if (f.size_ > 0) {
    void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      fail(path, std::string("cannot mmap: ") + std::strerror(err));
    }
    f.data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping stays valid without the descriptor
  f.header_ = parse_safetensors(std::span<const uint8_t>(f.data_, f.size_), path);
  return f;
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      header_(std::move(other.header_)) {}

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    header_ = std::move(other.header_);
  }
  return *this;
}

SafetensorsFile::~SafetensorsFile() {
  unmap();
}

void SafetensorsFile::unmap() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

bool SafetensorsFile::release_pages(const void* p, size_t n) const {
  const auto* b = static_cast<const uint8_t*>(p);
  if (data_ == nullptr || b < data_ || b + n > data_ + size_) return false;
  const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(b) + page - 1) / page * page;
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(b) + n) / page * page;
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
  return true;
}

std::span<const uint8_t> SafetensorsFile::bytes(const SafetensorsTensor& tensor) const {
  // Offsets were validated against this mapping's size at parse time.
  return std::span<const uint8_t>(data_ + tensor.begin, tensor.end - tensor.begin);
}

}  // namespace ps
