// On-device sampling (kernels.h): one block per row. Passes over the row, all in fp32 from
// global memory (the row stays in L2): max/argmax, log-sum-exp, then only where requested a
// bisection for the top-k and top-p thresholds, and one Gumbel-max pass to draw.
//
// Thresholds are found on the bit patterns of e_i = exp((l_i - max) / T) in (0, 1]: for
// positive floats the bits order like the values, so 30 halvings of [0, bits(1.0f)] land on an
// element's exact value. Every token whose e equals the boundary value is kept (the CPU sampler
// keeps exactly k, lower ids first): with real logits such ties are vanishingly rare.
#include "cuda/common.cuh"
#include "cuda/philox.cuh"

namespace ps::cuda {
namespace {

constexpr int kThreads = 1024;
constexpr float kGreedyTemperature = 1e-5f;  // sampling/sampling_params.h's threshold

__device__ __forceinline__ float clean(float l) {
  return isnan(l) ? -INFINITY : l;
}

// Larger value wins; on equal values the lower index (the CPU sampler's tie rule).
__device__ __forceinline__ void better(float& v, int& i, float v2, int i2) {
  if (v2 > v || (v2 == v && i2 < i)) v = v2, i = i2;
}

__device__ void block_argmax(float& v, int& i) {
  __shared__ float sv[32];
  __shared__ int si[32];
  for (int o = 16; o > 0; o >>= 1) {
    better(v, i, __shfl_xor_sync(0xffffffffu, v, o), __shfl_xor_sync(0xffffffffu, i, o));
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) sv[warp] = v, si[warp] = i;
  __syncthreads();
  v = lane < int(blockDim.x >> 5) ? sv[lane] : -INFINITY;
  i = lane < int(blockDim.x >> 5) ? si[lane] : 0x7fffffff;
  for (int o = 16; o > 0; o >>= 1) {
    better(v, i, __shfl_xor_sync(0xffffffffu, v, o), __shfl_xor_sync(0xffffffffu, i, o));
  }
}

__device__ double block_sum_d(double v) {
  __shared__ double part[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < int(blockDim.x >> 5) ? part[lane] : 0.0;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

struct Row {
  const float* l;
  int vocab;
  float mx, inv_t;
  __device__ float e(int i) const { return __expf((clean(l[i]) - mx) * inv_t); }
};

// Sum over tokens with bits(e) >= key of (count ? 1 : e), restricted to e >= floor.
__device__ double mass_from(const Row& row, uint32_t key, float floor, bool count) {
  double s = 0.0;
  for (int i = threadIdx.x; i < row.vocab; i += blockDim.x) {
    const float e = row.e(i);
    if (__float_as_uint(e) >= key && e >= floor) s += count ? 1.0 : double(e);
  }
  return block_sum_d(s);
}

// Largest key in [lo, hi] with mass_from(key) >= target (mass_from(lo) >= target holds).
__device__ uint32_t bisect(const Row& row, uint32_t lo, uint32_t hi, float floor, bool count,
                           double target) {
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    if (mass_from(row, mid, floor, count) >= target) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

__global__ void __launch_bounds__(kThreads)
    sample_kernel(const float* __restrict__ logits, int64_t ld, int32_t vocab,
                  const SamplingRowParams* __restrict__ params, int32_t* __restrict__ tokens,
                  float* __restrict__ logprobs) {
  const int r = blockIdx.x;
  const float* l = logits + int64_t(r) * ld;
  const SamplingRowParams p = params[r];

  float best = -INFINITY;
  int best_i = 0x7fffffff;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) better(best, best_i, clean(l[i]), i);
  block_argmax(best, best_i);
  const float mx = best;

  int token = best_i;
  if (p.temperature >= kGreedyTemperature && mx > -INFINITY) {
    Row row{l, vocab, mx, 1.0f / p.temperature};
    float floor = p.min_p > 0.0f ? p.min_p : 0.0f;  // e_max is 1: min-p is a fixed floor
    uint32_t key = 0;
    if (p.top_k > 0 && p.top_k < vocab) {
      key = bisect(row, 0, __float_as_uint(1.0f), 0.0f, true, double(p.top_k));
    }
    if (p.top_p < 1.0f) {
      const double kept = mass_from(row, key, 0.0f, false);
      key = bisect(row, key, __float_as_uint(1.0f), 0.0f, false, double(p.top_p) * kept);
    }
    floor = fmaxf(floor, __uint_as_float(key));
    // Gumbel-max: argmax of log e_i + G_i over the kept tokens samples e_i / sum(kept e).
    float g_best = -INFINITY;
    int g_i = 0x7fffffff;
    for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
      const float z = (clean(l[i]) - mx) * row.inv_t;
      if (__expf(z) >= floor && z > -INFINITY) {
        const float u = philox_uniform_at(p.seed, p.step, uint32_t(i));
        // Accurate logf: near u = 1, -log(u) is tiny and __logf's absolute error would swamp it.
        better(g_best, g_i, z - logf(-logf(u)), i);
      }
    }
    block_argmax(g_best, g_i);
    if (g_i != 0x7fffffff) token = g_i;
  }

  if (logprobs != nullptr) {
    float s = 0.0f;
    for (int i = threadIdx.x; i < vocab; i += blockDim.x) s += __expf(clean(l[i]) - mx);
    s = block_sum(s);
    if (threadIdx.x == 0) logprobs[r] = clean(l[token]) - mx - __logf(s);
  }
  if (threadIdx.x == 0) tokens[r] = token;
}

}  // namespace

void sample(const SampleArgs& a, Stream stream) {
  require(a.rows >= 0 && a.vocab > 0 && a.ld >= a.vocab, "sample: need vocab > 0, ld >= vocab");
  require(a.logits != nullptr && a.params != nullptr && a.tokens != nullptr,
          "sample: logits, params and tokens are required");
  if (a.rows == 0) return;
  sample_kernel<<<a.rows, kThreads, 0, stream>>>(a.logits, a.ld, a.vocab, a.params, a.tokens,
                                                 a.logprobs);
  check_launch("sample");
}

}  // namespace ps::cuda
