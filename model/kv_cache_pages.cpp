#include "model/kv_cache_pages.h"

#include <sys/mman.h>

#include <stdexcept>
#include <string>

namespace ps {

at::Tensor lazily_committed_zeros(at::IntArrayRef sizes, at::ScalarType type) {
  int64_t elements = 1;
  for (int64_t s : sizes) elements *= s;
  const size_t bytes = static_cast<size_t>(elements) * at::elementSize(type);
  if (bytes == 0) return at::zeros(sizes, at::TensorOptions().dtype(type));
  // MAP_NORESERVE: the pool's size is a ceiling the block manager enforces, not a demand on
  // swap up front.
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    throw std::runtime_error("KV cache: cannot map " + std::to_string(bytes) +
                             " bytes (lower --kv-cache-memory)");
  }
  return at::from_blob(
      p, sizes, [bytes](void* q) { ::munmap(q, bytes); }, at::TensorOptions().dtype(type));
}

}  // namespace ps
