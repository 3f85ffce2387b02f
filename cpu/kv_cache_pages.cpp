#include "cpu/kv_cache_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace ps {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;  // x86-64's transparent huge page

}  // namespace

Tensor lazily_committed_zeros(std::vector<int64_t> sizes, DType type) {
  int64_t elements = 1;
  for (int64_t s : sizes) elements *= s;
  const size_t bytes = static_cast<size_t>(elements) * dtype_size(type);
  if (bytes == 0) return Tensor::zeros(std::move(sizes), type);
  // MAP_NORESERVE: the pool's size is a ceiling the block manager enforces, not a demand on
  // swap up front. One huge page more than asked, to start the tensor on a huge-page boundary.
  const size_t mapped = bytes + kHugePage;
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    throw std::runtime_error("KV cache: cannot map " + std::to_string(bytes) +
                             " bytes (lower --kv-cache-memory)");
  }
  void* start = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(p) + kHugePage - 1) /
                                        kHugePage * kHugePage);
  // Transparent huge pages where the kernel offers them for madvise'd memory (the default
  // "madvise" mode; a no-op under "never"). A sequence's blocks are scattered over the pool, so
  // on 4 KB pages a decode step's attention missed the TLB block after block, and every block a
  // prompt first wrote took a page fault of its own (a costly exit on a virtual machine): with
  // 2 MB pages 16 decoding sequences of the 0.6B shape ran 1.27x faster a step and a 2048-token
  // prefill ~5% faster (docs/performance.md). Memory is still committed only where written, in
  // 2 MB steps.
  ::madvise(start, bytes, MADV_HUGEPAGE);
  std::shared_ptr<const void> mapping(
      p, [mapped](const void* q) { ::munmap(const_cast<void*>(q), mapped); });
  return Tensor::view(start, std::move(sizes), type, std::move(mapping));
}

}  // namespace ps
