// reshape_and_cache (kernels.h): this step's K/V rows into their paged-cache slots. One block
// per token; a row is copied in 16-byte pieces when pointers and strides allow it.
#include "cuda/common.cuh"

namespace ps::cuda {
namespace {

template <typename W>
__global__ void cache_write_kernel(const W* __restrict__ k, const W* __restrict__ v,
                                   int64_t row_stride, const int32_t* __restrict__ slot_mapping,
                                   int32_t width, W* __restrict__ k_cache,
                                   W* __restrict__ v_cache) {
  const int t = blockIdx.x;
  const int64_t slot = slot_mapping[t];
  if (slot < 0) return;  // padding row
  const W* ks = k + int64_t(t) * row_stride;
  const W* vs = v + int64_t(t) * row_stride;
  W* kd = k_cache + slot * width;
  W* vd = v_cache + slot * width;
  for (int i = threadIdx.x; i < width; i += blockDim.x) {
    kd[i] = ks[i];
    vd[i] = vs[i];
  }
}

template <typename W>
void launch(const void* k, const void* v, int64_t row_stride, const int32_t* slots, int32_t n,
            int32_t width, void* kc, void* vc, Stream stream) {
  const int threads = width >= 256 ? 256 : (width + 31) / 32 * 32;
  cache_write_kernel<W><<<n, threads, 0, stream>>>(static_cast<const W*>(k),
                                                   static_cast<const W*>(v), row_stride, slots,
                                                   width, static_cast<W*>(kc), static_cast<W*>(vc));
  check_launch("reshape_and_cache");
}

bool all_aligned(size_t a, const void* p0, const void* p1, const void* p2, const void* p3) {
  const auto ok = [a](const void* p) { return reinterpret_cast<uintptr_t>(p) % a == 0; };
  return ok(p0) && ok(p1) && ok(p2) && ok(p3);
}

}  // namespace

void reshape_and_cache(DType dtype, const void* k, const void* v, int64_t row_stride,
                       const int32_t* slot_mapping, int32_t num_tokens, int32_t kv_width,
                       void* k_cache, void* v_cache, Stream stream) {
  require(num_tokens >= 0 && kv_width > 0 && row_stride >= kv_width,
          "reshape_and_cache: need kv_width > 0 and row_stride >= kv_width");
  if (num_tokens == 0) return;
  // The copy is type-blind: move bytes in the widest unit that divides rows and pointers.
  const int64_t bytes = kv_width * int64_t(dtype_bytes(dtype));
  const int64_t stride_bytes = row_stride * int64_t(dtype_bytes(dtype));
  if (bytes % 16 == 0 && stride_bytes % 16 == 0 && all_aligned(16, k, v, k_cache, v_cache)) {
    launch<uint4>(k, v, stride_bytes / 16, slot_mapping, num_tokens, int32_t(bytes / 16), k_cache,
                  v_cache, stream);
  } else if (bytes % 4 == 0 && stride_bytes % 4 == 0 && all_aligned(4, k, v, k_cache, v_cache)) {
    launch<uint32_t>(k, v, stride_bytes / 4, slot_mapping, num_tokens, int32_t(bytes / 4), k_cache,
                     v_cache, stream);
  } else {
    launch<uint16_t>(k, v, stride_bytes / 2, slot_mapping, num_tokens, int32_t(bytes / 2), k_cache,
                     v_cache, stream);
  }
}

}  // namespace ps::cuda
