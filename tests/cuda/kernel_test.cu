// Kernel test program for model/cuda (issue #10): each kernel against the plain C++ reference
// of cpu_reference.h on fresh random inputs, for every dtype it supports. Outputs are poisoned
// before each launch, so a kernel that skips an element fails instead of passing on stale data.
//
//   kernel_test [--seed N] [--require-gpu]
// Exit 0 when all checks pass. Without a GPU it says so, runs nothing and exits 0, or 1 with
// --require-gpu (scripts/device-check.sh), so a machine without a GPU never reads as a pass.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>

#include "tests/cuda/cpu_reference.h"
#include "tests/cuda/device_buffers.cuh"

namespace ps::cuda::test {
namespace {

std::mt19937_64 rng;
const DType kAll[] = {DType::f32, DType::f16, DType::bf16};

std::vector<float> randn(size_t n, DType t, float sigma = 1.0f) {
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = round_to(t, d(rng));
  return v;
}

void test_cache_write(Ledger& L, DType t) {
  const int tokens = 37, width = 8 * 128, stride = 16 * 128 + width * 2, blocks = 9, bs = 16;
  auto k = randn(size_t(tokens) * stride, t), v = randn(size_t(tokens) * stride, t);
  std::vector<int32_t> slots(blocks * bs);
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  slots.resize(tokens);
  slots[5] = -1;  // padding row: must not be written
  DevBuf dk(t, k), dv(t, v), kc(t, size_t(blocks) * bs * width), vc(t, kc.n);
  DevInts<int32_t> ds(slots);
  reshape_and_cache(t, dk.p, dv.p, stride, ds.p, tokens, width, kc.p, vc.p, nullptr);
  ck(cudaDeviceSynchronize(), "reshape_and_cache");
  std::vector<float> wk(kc.n, NAN), wv(kc.n, NAN);
  for (int i = 0; i < tokens; ++i) {
    if (slots[i] < 0) continue;
    for (int j = 0; j < width; ++j) {
      wk[size_t(slots[i]) * width + j] = k[size_t(i) * stride + j];
      wv[size_t(slots[i]) * width + j] = v[size_t(i) * stride + j];
    }
  }
  // Untouched slots must still hold the poison: compare NaN-ness there, values elsewhere.
  auto gk = kc.download(), gv = vc.download();
  bool ok = true;
  for (size_t i = 0; i < wk.size(); ++i) {
    ok &= std::isnan(wk[i]) ? std::isnan(gk[i]) && std::isnan(gv[i])
                            : gk[i] == wk[i] && gv[i] == wv[i];
  }
  L.expect(std::string("reshape_and_cache ") + dtype_name(t), ok, "exact copy, -1 slot skipped");
}

void test_norms(Ledger& L, DType t) {
  const int rows = 19, width = 1024;
  auto x = randn(size_t(rows) * width, t, 2.0f), w = randn(width, t), res = randn(x.size(), t);
  DevBuf dx(t, x), dw(t, w), dy(t, x.size());
  rms_norm(t, dx.p, width, dw.p, 1e-6f, rows, width, dy.p, width, nullptr);
  std::vector<float> want(x.size());
  ref::rms_norm(x.data(), w.data(), 1e-6f, rows, width, want.data());
  L.close(std::string("rms_norm ") + dtype_name(t), dy.download(), want, tol_for(t));

  DevBuf dr(t, res);
  fused_add_rms_norm(t, dx.p, width, dr.p, width, dw.p, 1e-6f, rows, width, nullptr);
  static DType cur;
  cur = t;
  ref::fused_add_rms_norm(x.data(), res.data(), w.data(), 1e-6f, rows, width,
                          [](float f) { return round_to(cur, f); });
  L.close(std::string("fused_add_rms_norm(x) ") + dtype_name(t), dx.download(), x, tol_for(t));
  L.close(std::string("fused_add_rms_norm(residual) ") + dtype_name(t), dr.download(), res,
          tol_for(t));
}

void test_rope(Ledger& L, DType t, bool with_norm) {
  const int rows = 23, H = 16, KVH = 8, D = 128, ld = (H + 2 * KVH) * D, max_pos = 4096;
  auto qkv = randn(size_t(rows) * ld, t), qn = randn(D, t), kn = randn(D, t);
  std::vector<int32_t> pos(rows);
  for (auto& p : pos) p = int32_t(rng() % max_pos);
  std::vector<float> cs(size_t(max_pos) * D);
  for (int p = 0; p < max_pos; ++p) {
    for (int i = 0; i < D / 2; ++i) {
      const double ang = p * std::pow(1e6, -2.0 * i / D);
      cs[size_t(p) * D + i] = float(std::cos(ang));
      cs[size_t(p) * D + D / 2 + i] = float(std::sin(ang));
    }
  }
  DevBuf dq(t, qkv), dqn(t, qn), dkn(t, kn), dcs(DType::f32, cs);
  DevInts<int32_t> dp(pos);
  QkNormRopeArgs a;
  a.dtype = t, a.qkv = dq.p, a.ld = ld, a.rows = rows, a.positions = dp.p;
  a.num_heads = H, a.num_kv_heads = KVH, a.head_dim = D, a.eps = 1e-6f;
  a.q_norm = with_norm ? dqn.p : nullptr, a.k_norm = with_norm ? dkn.p : nullptr;
  a.cos_sin = static_cast<const float*>(dcs.p);
  qk_norm_rope(a, nullptr);
  ref::qk_norm_rope(qkv.data(), ld, rows, pos.data(), H, KVH, D, with_norm ? qn.data() : nullptr,
                    with_norm ? kn.data() : nullptr, 1e-6f, cs.data());
  L.close(std::string(with_norm ? "qk_norm_rope " : "rope ") + dtype_name(t), dq.download(), qkv,
          tol_for(t));  // v heads unchanged: compared too
}

void test_silu(Ledger& L, DType t) {
  const int rows = 13, inter = 3072;
  auto gu = randn(size_t(rows) * 2 * inter, t, 3.0f);
  DevBuf dg(t, gu), dout(t, size_t(rows) * inter);
  silu_and_mul(t, dg.p, rows, inter, dout.p, nullptr);
  std::vector<float> want(dout.n);
  ref::silu_and_mul(gu.data(), rows, inter, want.data());
  L.close(std::string("silu_and_mul ") + dtype_name(t), dout.download(), want, tol_for(t));
}

// A mixed step: decode rows and prefill chunks of several lengths, shuffled physical blocks.
// With sinks (gpt-oss), each head's sink logit ~ N(0, 2^2) joins its softmax denominator.
void test_attention(Ledger& L, DType t, int H, int KVH, int D, bool sinks = false) {
  ref::AttentionCase c;
  c.num_heads = H, c.num_kv_heads = KVH, c.head_dim = D, c.block_size = 16;
  c.scale = 1.0f / std::sqrt(float(D));
  if (sinks) c.sinks = randn(size_t(H), DType::f32, 2.0f);
  const int qlens[] = {1, 1, 1, 5, 17, 37, 1, 64};
  int total_blocks = 0, max_q = 0;
  c.query_start = {0};
  for (int ql : qlens) {
    const int ctx = ql + int(rng() % 90);
    c.context_len.push_back(ctx);
    c.query_start.push_back(c.query_start.back() + ql);
    total_blocks += (ctx + 15) / 16;
    max_q = std::max(max_q, ql);
  }
  c.max_blocks_per_seq = 0;
  for (int ctx : c.context_len)
    c.max_blocks_per_seq = std::max(c.max_blocks_per_seq, (ctx + 15) / 16);
  const int num_blocks = total_blocks + 3;
  std::vector<int32_t> phys(num_blocks);
  std::iota(phys.begin(), phys.end(), 0);
  std::shuffle(phys.begin(), phys.end(), rng);
  const int S = int(c.context_len.size());
  c.block_tables.assign(size_t(S) * c.max_blocks_per_seq, -1);  // unused entries: never read
  for (int s = 0, next = 0; s < S; ++s) {
    for (int b = 0; b < (c.context_len[s] + 15) / 16; ++b) {
      c.block_tables[size_t(s) * c.max_blocks_per_seq + b] = phys[next++];
    }
  }
  const int T = c.query_start.back(), qld = (H + 2 * KVH) * D;
  auto qkv = randn(size_t(T) * qld, t);
  auto kc = randn(size_t(num_blocks) * 16 * KVH * D, t), vc = randn(kc.size(), t);
  std::vector<float> q(size_t(T) * H * D);
  for (int r = 0; r < T; ++r) {
    std::copy_n(&qkv[size_t(r) * qld], H * D, &q[size_t(r) * H * D]);
  }
  DevBuf dq(t, qkv), dk(t, kc), dv(t, vc), dout(t, q.size());
  DevInts<int32_t> dbt(c.block_tables), dqs(c.query_start), dcl(c.context_len);
  PagedAttentionArgs a;
  a.dtype = t, a.q = dq.p, a.q_row_stride = qld, a.k_cache = dk.p, a.v_cache = dv.p;
  a.block_tables = dbt.p, a.max_blocks_per_seq = c.max_blocks_per_seq;
  a.query_start = dqs.p, a.context_len = dcl.p, a.num_seqs = S, a.max_query_len = max_q;
  a.num_heads = H, a.num_kv_heads = KVH, a.head_dim = D, a.block_size = 16, a.scale = c.scale;
  a.out = dout.p, a.out_row_stride = int64_t(H) * D;
  DevBuf dsinks(DType::f32, sinks ? c.sinks : std::vector<float>(1, 0.0f));
  if (sinks) a.sinks = static_cast<const float*>(dsinks.p);
  paged_attention(a, nullptr);
  std::vector<float> want(q.size());
  ref::paged_attention(c, q.data(), kc.data(), vc.data(), want.data());
  char name[96];
  std::snprintf(name, sizeof name, "paged_attention %s H%d KVH%d D%d%s", dtype_name(t), H, KVH, D,
                sinks ? " sinks" : "");
  L.close(name, dout.download(), want, tol_for(t));
}

void test_sampling(Ledger& L) {
  const int vocab = 151936;
  const SamplingRowParams rows[] = {
      {0.0f, 0, 1.0f, 0.0f, 1, 0},   {1.0f, 0, 1.0f, 0.0f, 7, 3},
      {0.7f, 50, 1.0f, 0.0f, 9, 0},  {1.0f, 0, 0.9f, 0.0f, 11, 5},
      {1.3f, 0, 1.0f, 0.05f, 13, 2}, {0.8f, 100, 0.8f, 0.02f, 42, 9},
      {1.0f, 1, 1.0f, 0.0f, 3, 1},   {2.0f, 0, 0.5f, 0.0f, 1ull << 40, 1ull << 33},
  };
  const int R = int(std::size(rows));
  std::vector<float> logits = randn(size_t(R) * vocab, DType::f32, 3.0f);
  logits[size_t(0) * vocab + 77] = logits[size_t(0) * vocab + 5] = 40.0f;  // tie: lowest id wins
  DevBuf dl(DType::f32, logits);
  std::vector<SamplingRowParams> hp(rows, rows + R);
  DevInts<SamplingRowParams> dp(hp);
  DevInts<int32_t> dt(std::vector<int32_t>(R, -7));
  DevBuf dlp(DType::f32, size_t(R));
  sample({static_cast<const float*>(dl.p), vocab, R, vocab, dp.p, dt.p, static_cast<float*>(dlp.p)},
         nullptr);
  const auto tok = dt.download();
  const auto lp = dlp.download();
  for (int r = 0; r < R; ++r) {
    const auto& p = rows[r];
    const auto want = ref::sample(&logits[size_t(r) * vocab], vocab, p.temperature, p.top_k,
                                  p.top_p, p.min_p, p.seed, p.step);
    char name[96], detail[160];
    std::snprintf(name, sizeof name, "sample row %d (T=%.1f k=%d p=%.2f min_p=%.2f)", r,
                  p.temperature, p.top_k, p.top_p, p.min_p);
    const bool ok = tok[r] == want.token && std::fabs(lp[r] - want.logprob) <= 1e-3f;
    std::snprintf(detail, sizeof detail, "token %d (want %d), logprob %.4f (want %.4f)", tok[r],
                  want.token, lp[r], want.logprob);
    L.expect(name, ok, detail);
  }
  // Batch invariance: the last row sampled alone gives the same token.
  DevInts<SamplingRowParams> one(std::vector<SamplingRowParams>{rows[R - 1]});
  DevInts<int32_t> t1(std::vector<int32_t>{-7});
  sample({static_cast<const float*>(dl.p) + size_t(R - 1) * vocab, vocab, 1, vocab, one.p, t1.p,
          nullptr},
         nullptr);
  const int alone = t1.download()[0];
  L.expect("sample batch invariance", alone == tok[R - 1],
           "alone " + std::to_string(alone) + ", in batch " + std::to_string(tok[R - 1]));
}

}  // namespace
}  // namespace ps::cuda::test

int main(int argc, char** argv) {
  using namespace ps::cuda;
  using namespace ps::cuda::test;
  uint64_t seed = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  bool require_gpu = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc)
      seed = std::stoull(argv[++i]);
    else if (a == "--require-gpu")
      require_gpu = true;
    else {
      std::fprintf(stderr, "usage: kernel_test [--seed N] [--require-gpu]\n");
      return 2;
    }
  }
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("NO GPU: %s. The kernels were compiled but NOT tested on this machine.\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    return require_gpu ? 1 : 0;
  }
  cudaDeviceProp prop{};
  ck(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("GPU: %s (sm_%d%d), seed %llu (rerun with --seed to reproduce)\n", prop.name,
              prop.major, prop.minor, (unsigned long long)seed);
  rng.seed(seed);
  Ledger L;
  for (DType t : kAll) {
    test_cache_write(L, t);
    test_norms(L, t);
    test_rope(L, t, true);
    test_rope(L, t, false);
    test_silu(L, t);
    test_attention(L, t, 16, 8, 128);       // Qwen3-0.6B
    test_attention(L, t, 4, 1, 64);         // wide GQA group
    test_attention(L, t, 8, 8, 256);        // no GQA, large heads
    test_attention(L, t, 32, 4, 128);       // group of 8: more items than warps
    test_attention(L, t, 64, 8, 64, true);  // gpt-oss's heads, with sinks
    test_attention(L, t, 4, 1, 64, true);   // sinks on the split-keys path (few items)
  }
  test_sampling(L);
  ck(cudaDeviceSynchronize(), "final sync");
  std::printf("%s: %d passed, %d failed\n", L.failed ? "FAILED" : "ALL PASSED", L.passed, L.failed);
  return L.failed ? 1 : 0;
}
