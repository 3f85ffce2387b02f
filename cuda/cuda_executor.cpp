// CudaExecutor (cuda_executor.h): weights and memory, the eager step. Host code compiled by the
// C++ compiler against the CUDA runtime and cuBLAS C APIs; the kernels it launches are in
// cuda/*.cu; the graph side is cuda_executor_graphs.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include "cuda/cuda_executor_impl.h"
#include "cuda/executor_kernels.h"
#include "cuda/graph_buckets.h"
#include "model/kv_sizing.h"
#include "model/rope_scaling.h"
#include "model/step_plan_check.h"

namespace ps::cuda {

CudaExecutor::CudaExecutor(Bf16ModelSource source, const CudaExecutorOptions& o, KvCacheSpec* kv,
                           std::string* sizing)
    : c_(source.config) {
  if (o.block_size <= 0) throw std::invalid_argument("CudaExecutor: block_size must be >= 1");
  check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
  size_t free_bytes = 0, total_bytes = 0;
  // Measured before this executor allocates anything: what others hold is total - free.
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cublas(cublas_api().create(&cublas_), "cublasCreate");
  check_cublas(cublas_api().set_stream(cublas_, stream_), "cublasSetStream");
  // An explicit workspace, so cuBLAS allocates nothing behind the KV sizing's back.
  cublas_workspace_.reserve(kCublasWorkspace, "cuBLAS workspace");
  check_cublas(
      cublas_api().set_workspace(cublas_, cublas_workspace_.get(), size_t(kCublasWorkspace)),
      "cublasSetWorkspace");

  upload_weights(source);
  source = Bf16ModelSource{};  // drops the host copy now that the device has it
  upload_rope_table();

  const StepShape want{std::max<int64_t>({1, o.max_tokens_per_step, o.max_seqs}),
                       std::max<int64_t>(1, o.max_seqs)};
  KvSizingInput in;
  in.free_bytes = int64_t(free_bytes);
  in.total_bytes = int64_t(total_bytes);
  in.weight_bytes = weights_.bytes() + rope_.bytes() + kCublasWorkspace;
  in.activation_bytes = step_buffer_bytes(want);
  in.bytes_per_block = cuda_kv_bytes_per_block(c_, o.block_size);
  in.gpu_memory_utilization = o.gpu_memory_utilization;
  in.kv_cache_memory = o.kv_cache_memory;
  in.num_blocks = o.num_blocks;
  in.block_size = o.block_size;
  const KvSizing sized = size_kv_cache(in);
  reserve_step(want);
  spec_ = KvCacheSpec{sized.num_blocks, o.block_size};
  graphs_enabled_ = o.cuda_graphs;
  buckets_ = graph_buckets(int32_t(std::min<int64_t>(capacity_.rows, 256)));
  graph_width_ = int32_t(std::min<int64_t>(
      (int64_t{c_.max_context_len()} + o.block_size - 1) / o.block_size, sized.num_blocks));
  kv_layer_bytes_ = int64_t{sized.num_blocks} * o.block_size * c_.kv_size() * dtype_bytes(kAct);
  kv_.reserve(sized.kv_bytes, "KV cache");
  // Zeroed: a kernel bug that reads an unwritten slot then reads zeros, not last run's data.
  check_cuda(cudaMemsetAsync(kv_.get(), 0, size_t(sized.kv_bytes), stream_), "zero KV cache");
  check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  if (graphs_enabled_) capture_all_graphs();  // needs the cache: warm-up steps read block 0

  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  summary_ = std::string("cuda ") + prop.name + ": bf16 weights (" +
             std::to_string(bytes_per_token_ / 1000000) +
             " MB read per token), cuBLAS GemmEx fp32 accumulate, kv cache bf16, " +
             (graphs_enabled_ && !buckets_.empty()
                  ? "CUDA graphs for decode batches up to " + std::to_string(buckets_.back())
                  : std::string("eager steps")) +
             ", logits to host";
  if (kv != nullptr) *kv = spec_;
  if (sizing != nullptr) *sizing = sized.summary;
}

CudaExecutor::~CudaExecutor() {
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  drop_graphs();
  if (cublas_ != nullptr) cublas_api().destroy(cublas_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void CudaExecutor::upload_weights(const Bf16ModelSource& s) {
  if (int64_t(s.layers.size()) != c_.num_hidden_layers) {
    throw std::invalid_argument("CudaExecutor: layer count disagrees with config");
  }
  // Two passes over the same list: sizes for the one arena, then copies into it.
  std::vector<const Bf16Host*> all = {&s.embed, &s.final_norm};
  if (!s.tied) all.push_back(&s.lm_head);
  for (const Bf16LayerSource& l : s.layers) {
    for (const Bf16Host* t : {&l.input_norm, &l.post_norm, &l.qkv, &l.qkv_bias, &l.q_norm,
                              &l.k_norm, &l.o_proj, &l.gate_up, &l.down}) {
      all.push_back(t);
    }
  }
  int64_t total = 0;
  for (const Bf16Host* t : all) total += align_up(t->bytes());
  weights_.reserve(total, "weights");
  char* base = static_cast<char*>(weights_.get());
  int64_t at = 0;
  auto put = [&](const Bf16Host& t) -> const void* {
    if (t.numel() == 0) return nullptr;
    if (t.data == nullptr) throw std::invalid_argument("CudaExecutor: a weight has no data");
    void* dst = base + at;
    check_cuda(cudaMemcpy(dst, t.data, size_t(t.bytes()), cudaMemcpyHostToDevice),
               "cudaMemcpy (weights)");
    at += align_up(t.bytes());
    return dst;
  };
  embed_ = put(s.embed);
  final_norm_ = put(s.final_norm);
  lm_head_ = s.tied ? embed_ : put(s.lm_head);
  bytes_per_token_ = s.lm_head.bytes();
  for (const Bf16LayerSource& l : s.layers) {
    DeviceLayer d;
    d.input_norm = put(l.input_norm);
    d.post_norm = put(l.post_norm);
    d.qkv = put(l.qkv);
    d.qkv_bias = put(l.qkv_bias);
    d.q_norm = put(l.q_norm);
    d.k_norm = put(l.k_norm);
    d.o_proj = put(l.o_proj);
    d.gate_up = put(l.gate_up);
    d.down = put(l.down);
    layers_.push_back(d);
    bytes_per_token_ += l.qkv.bytes() + l.o_proj.bytes() + l.gate_up.bytes() + l.down.bytes();
  }
}

void CudaExecutor::upload_rope_table() {
  // The same angles as the CPU runner and the oracle: float(position) * inv_freq, scaled by the
  // attention factor (rope_scaling.h). One row per position the engine allows.
  const RopeFrequencies rope = rope_frequencies(c_);
  const int32_t D = c_.head_dim, half = D / 2;
  if (rope.rotary_dim != D) {
    throw std::invalid_argument("CudaExecutor: partial rotary embeddings are CPU-only");
  }
  if (c_.gemma_layout() || c_.gpt_oss() || !c_.layer_types.empty()) {
    const char* what = c_.gpt_oss() ? " (sliding-window layers, attention sinks, MXFP4 experts)"
                                    : " (sliding-window layers, Gemma's norms)";
    throw std::invalid_argument("CudaExecutor: " + c_.model_type + what +
                                " is CPU-only; use --device cpu");
  }
  if (!c_.rope_layers.empty()) {
    for (int32_t l = 0; l < c_.num_hidden_layers; ++l) {
      if (!c_.layer_uses_rope(l)) {
        throw std::invalid_argument(
            "CudaExecutor: NoPE layers (smollm3's no_rope_layers) are CPU-only; use --device cpu");
      }
    }
  }
  const int64_t P = std::max<int64_t>(c_.max_context_len(), c_.max_position_embeddings);
  std::vector<float> table(size_t(P * D));
  for (int64_t p = 0; p < P; ++p) {
    for (int32_t i = 0; i < half; ++i) {
      const float angle = float(p) * rope.inv_freq[size_t(i)];
      table[size_t(p * D + i)] = std::cos(angle) * rope.attention_factor;
      table[size_t(p * D + half + i)] = std::sin(angle) * rope.attention_factor;
    }
  }
  rope_.reserve(int64_t(table.size() * sizeof(float)), "RoPE table");
  check_cuda(
      cudaMemcpy(rope_.get(), table.data(), table.size() * sizeof(float), cudaMemcpyHostToDevice),
      "cudaMemcpy (RoPE table)");
}

int64_t CudaExecutor::step_buffer_bytes(StepShape s) const {
  const int64_t H = c_.hidden_size, Q = c_.q_size(), KV = c_.kv_size();
  const int64_t I = c_.intermediate_size, V = c_.vocab_size, e = dtype_bytes(kAct);
  const int64_t per_token = (2 * H + (Q + 2 * KV) + Q + 3 * I) * e  // residual, x, qkv, attn,
                            + 8 * 4 * 2;                            // gu, act; plan arrays
  const int64_t per_row = H * e + V * 4;                            // sel, fp32 logits
  // Block tables: max_seqs rows of at most every block; bounded generously by tokens * 4 ints.
  return s.tokens * per_token + s.rows * per_row + s.tokens * 4 * 4 * 2 + 6 * kAlign;
}

void CudaExecutor::reserve_step(StepShape s) {
  if (s.tokens <= capacity_.tokens && s.rows <= capacity_.rows) return;
  drop_graphs();  // they hold the old buffers' addresses
  s.tokens = std::max(s.tokens, capacity_.tokens);
  s.rows = std::max(s.rows, capacity_.rows);
  const int64_t H = c_.hidden_size, Q = c_.q_size(), KV = c_.kv_size();
  const int64_t I = c_.intermediate_size, V = c_.vocab_size, e = dtype_bytes(kAct);
  residual_.reserve(s.tokens * H * e, "step buffers");
  x_.reserve(s.tokens * H * e, "step buffers");
  qkv_.reserve(s.tokens * (Q + 2 * KV) * e, "step buffers");
  attn_.reserve(s.tokens * Q * e, "step buffers");
  gu_.reserve(s.tokens * 2 * I * e, "step buffers");
  act_.reserve(s.tokens * I * e, "step buffers");
  sel_.reserve(s.rows * H * e, "step buffers");
  logits_.reserve(s.rows * V * 4, "logits");
  logits_host_.reserve(s.rows * V * 4, "pinned logits");
  capacity_ = s;
}

void CudaExecutor::gemm(const void* x, int64_t m, int64_t k, const void* w, int64_t n, void* y,
                        cudaDataType_t y_type) {
  // cuBLAS is column-major: a row-major [n, k] weight is a column-major k x n matrix, so
  // y (row-major [m, n], column-major n x m) = op(W)=Wᵀ (n x k) times x (k x m).
  const float alpha = 1.0f, beta = 0.0f;
  check_cublas(cublas_api().gemm_ex(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(m), int(k),
                                    &alpha, w, CUDA_R_16BF, int(k), x, CUDA_R_16BF, int(k), &beta,
                                    y, y_type, int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

void CudaExecutor::forward(const StepPlan& plan, std::vector<float>* logits) {
  if (logits == nullptr) throw std::invalid_argument("CudaExecutor::forward: logits is null");
  if (plan.empty() && plan.token_ids.empty()) {
    logits->clear();
    return;
  }
  check_step_plan(plan, c_, spec_.num_blocks, spec_.block_size);
  for (int32_t slot : plan.lora_slot) {
    if (slot >= 0) throw std::invalid_argument("--device cuda runs no LoRA adapters yet");
  }
  const PlanUploadLayout lay = plan_upload_layout(plan);
  const int64_t R = lay.num_logit_rows;
  logits->resize(size_t(R * c_.vocab_size));
  if (lay.num_tokens == 0) return;
  if (try_graph_step(plan)) {
    copy_logits_back(R, logits);
    return;
  }
  reserve_step(StepShape{lay.num_tokens, R});
  plan_host_.reserve(lay.total * 4, "pinned plan");
  plan_dev_.reserve(lay.total * 4, "plan");
  pack_plan(plan, lay, static_cast<int32_t*>(plan_host_.get()));
  check_cuda(cudaMemcpyAsync(plan_dev_.get(), plan_host_.get(), size_t(lay.total) * 4,
                             cudaMemcpyHostToDevice, stream_),
             "cudaMemcpyAsync (plan)");
  enqueue_step(lay, static_cast<const int32_t*>(plan_dev_.get()));
  copy_logits_back(R, logits);
}

void CudaExecutor::copy_logits_back(int64_t rows, std::vector<float>* logits) {
  const size_t bytes = size_t(rows * c_.vocab_size) * 4;
  if (rows > 0) {
    check_cuda(
        cudaMemcpyAsync(logits_host_.get(), logits_.get(), bytes, cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync (logits)");
  }
  // Also what makes reusing the pinned plan buffer next step safe.
  check_cuda(cudaStreamSynchronize(stream_), "the step's kernels");
  if (rows > 0) std::memcpy(logits->data(), logits_host_.get(), bytes);
}

void CudaExecutor::enqueue_step(const PlanUploadLayout& lay, const int32_t* d) {
  const int64_t T = lay.num_tokens, R = lay.num_logit_rows, S = lay.num_seqs;
  const int64_t H = c_.hidden_size, Q = c_.q_size(), KV = c_.kv_size(), QKV = Q + 2 * KV;
  const int64_t I = c_.intermediate_size, V = c_.vocab_size;
  const float eps = c_.rms_norm_eps;
  void* res = residual_.get();
  void* x = x_.get();
  void* qkv = qkv_.get();
  char* qkv_bytes = static_cast<char*>(qkv);
  const int64_t e = dtype_bytes(kAct);
  embedding_gather(kAct, embed_, d + lay.token_ids, T, int32_t(H), res, stream_);

  PagedAttentionArgs pa;
  pa.dtype = kAct;
  pa.q = qkv;
  pa.q_row_stride = QKV;
  pa.block_tables = d + lay.block_tables;
  pa.max_blocks_per_seq = lay.max_blocks_per_seq;
  pa.query_start = d + lay.query_start;
  pa.context_len = d + lay.context_len;
  pa.num_seqs = int32_t(S);
  pa.max_query_len = lay.max_query_len;
  pa.num_heads = c_.num_attention_heads;
  pa.num_kv_heads = c_.num_key_value_heads;
  pa.head_dim = c_.head_dim;
  pa.block_size = spec_.block_size;
  pa.scale = 1.0f / std::sqrt(float(c_.head_dim));
  pa.out = attn_.get();
  pa.out_row_stride = Q;

  QkNormRopeArgs qr;
  qr.dtype = kAct;
  qr.qkv = qkv;
  qr.ld = QKV;
  qr.rows = T;
  qr.positions = d + lay.positions;
  qr.num_heads = c_.num_attention_heads;
  qr.num_kv_heads = c_.num_key_value_heads;
  qr.head_dim = c_.head_dim;
  qr.eps = eps;
  qr.cos_sin = static_cast<const float*>(rope_.get());

  char* kv_base = static_cast<char*>(kv_.get());
  for (size_t l = 0; l < layers_.size(); ++l) {
    const DeviceLayer& w = layers_[l];
    // x holds the previous layer's MLP output: the residual absorbs it, x becomes the norm.
    if (l == 0) {
      rms_norm(kAct, res, H, w.input_norm, eps, T, int32_t(H), x, H, stream_);
    } else {
      fused_add_rms_norm(kAct, x, H, res, H, w.input_norm, eps, T, int32_t(H), stream_);
    }
    gemm(x, T, H, w.qkv, QKV, qkv, CUDA_R_16BF);
    if (w.qkv_bias != nullptr) add_bias_rows(kAct, qkv, QKV, T, int32_t(QKV), w.qkv_bias, stream_);
    qr.q_norm = w.q_norm;
    qr.k_norm = w.k_norm;
    qk_norm_rope(qr, stream_);
    void* kc = kv_base + int64_t(2 * l) * kv_layer_bytes_;
    void* vc = kv_base + int64_t(2 * l + 1) * kv_layer_bytes_;
    reshape_and_cache(kAct, qkv_bytes + Q * e, qkv_bytes + (Q + KV) * e, QKV, d + lay.slot_mapping,
                      int32_t(T), int32_t(KV), kc, vc, stream_);
    pa.k_cache = kc;
    pa.v_cache = vc;
    paged_attention(pa, stream_);
    gemm(attn_.get(), T, Q, w.o_proj, H, x, CUDA_R_16BF);
    fused_add_rms_norm(kAct, x, H, res, H, w.post_norm, eps, T, int32_t(H), stream_);
    gemm(x, T, H, w.gate_up, 2 * I, gu_.get(), CUDA_R_16BF);
    silu_and_mul(kAct, gu_.get(), T, I, act_.get(), stream_);
    gemm(act_.get(), T, I, w.down, H, x, CUDA_R_16BF);
  }
  if (R == 0) return;
  // Only the sampled rows go through the final norm and lm_head: their MLP output into sel,
  // their residual into x's first R rows (x is free now), then residual + out, normed, in sel.
  gather_rows(kAct, x, H, d + lay.logit_rows, R, int32_t(H), sel_.get(), H, stream_);
  gather_rows(kAct, res, H, d + lay.logit_rows, R, int32_t(H), x, H, stream_);
  fused_add_rms_norm(kAct, sel_.get(), H, x, H, final_norm_, eps, R, int32_t(H), stream_);
  gemm(sel_.get(), R, H, lm_head_, V, logits_.get(), CUDA_R_32F);
}

void CudaExecutor::set_lora_adapter(int32_t slot, std::shared_ptr<const LoraAdapter> adapter) {
  (void)slot;
  if (adapter) throw std::invalid_argument("--device cuda runs no LoRA adapters yet");
}

int64_t cuda_kv_bytes_per_block(const ModelConfig& c, int32_t block_size) {
  return 2 * int64_t{c.num_hidden_layers} * block_size * c.kv_size() * dtype_bytes(kAct);
}

std::unique_ptr<Executor> make_cuda_executor(Bf16ModelSource source, const CudaExecutorOptions& o,
                                             KvCacheSpec* kv, std::string* sizing) {
  return std::make_unique<CudaExecutor>(std::move(source), o, kv, sizing);
}

}  // namespace ps::cuda
