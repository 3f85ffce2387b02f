#include "cpu/kv_cache_pages.h"

#include <sys/mman.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace ps {

Tensor lazily_committed_zeros(std::vector<int64_t> sizes, DType type) {
  int64_t elements = 1;
  for (int64_t s : sizes) elements *= s;
  const size_t bytes = static_cast<size_t>(elements) * dtype_size(type);
  if (bytes == 0) return Tensor::zeros(std::move(sizes), type);
  // MAP_NORESERVE: the pool's size is a ceiling the block manager enforces, not a demand on
  // swap up front.
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    throw std::runtime_error("KV cache: cannot map " + std::to_string(bytes) +
                             " bytes (lower --kv-cache-memory)");
  }
  std::shared_ptr<const void> mapping(
      p, [bytes](const void* q) { ::munmap(const_cast<void*>(q), bytes); });
  return Tensor::view(p, std::move(sizes), type, std::move(mapping));
}

}  // namespace ps
