// CudaExecutor (cuda_executor.h). Host code compiled by the C++ compiler against the CUDA
// runtime and cuBLAS C APIs; the kernels it launches are in model/cuda/*.cu.
#include "model/cuda/cuda_executor.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "model/cuda/device_memory.h"
#include "model/cuda/executor_kernels.h"
#include "model/cuda/kernels.h"
#include "model/graph_buckets.h"
#include "model/kv_sizing.h"
#include "model/plan_upload.h"
#include "model/rope_scaling.h"
#include "model/runner_plan_check.h"

namespace ps::cuda {
namespace {

constexpr DType kAct = DType::bf16;  // activations, weights and the KV cache
constexpr int64_t kAlign = 256;      // bytes: every tensor in the weight arena starts here
constexpr int64_t kCublasWorkspace = 32ll << 20;

int64_t align_up(int64_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLAS ") + what + ": " + cublasGetStatusString(s));
  }
}

// A layer's weights as device pointers into the arena (nullptr: the model has none).
struct DeviceLayer {
  const void *input_norm = nullptr, *post_norm = nullptr;
  const void *qkv = nullptr, *qkv_bias = nullptr, *q_norm = nullptr, *k_norm = nullptr;
  const void *o_proj = nullptr, *gate_up = nullptr, *down = nullptr;
};

// The step buffers' size: `tokens` packed rows, `rows` logits rows.
struct StepShape {
  int64_t tokens = 0, rows = 0;
};

class CudaExecutor final : public Executor {
 public:
  CudaExecutor(Bf16ModelSource source, const CudaExecutorOptions& o, KvCacheSpec* kv,
               std::string* sizing);
  ~CudaExecutor() override;

  void forward(const StepPlan& plan, std::vector<float>* logits) override;
  void set_lora_adapter(int32_t slot, std::shared_ptr<const LoraAdapter> adapter) override;
  const ModelConfig& config() const override { return c_; }
  const std::string& kernel_summary() const override { return summary_; }
  int64_t weight_bytes() const override { return weights_.bytes(); }
  int64_t weight_bytes_per_token() const override { return bytes_per_token_; }

 private:
  int64_t step_buffer_bytes(StepShape s) const;
  void reserve_step(StepShape s);
  // Enqueues the whole step, from the embedding lookup to lm_head's fp32 logits in logits_,
  // reading the plan from `d` (device) laid out as `lay`. No copies, no syncs: the same calls
  // run eagerly or are captured into a graph.
  void enqueue_step(const PlanUploadLayout& lay, const int32_t* d);
  // Runs a decode step through its bucket's graph (capturing it the first time the bucket runs);
  // false when the step is not one a graph runs.
  bool try_graph_step(const StepPlan& plan);
  // At start: each bucket's all-padding plan runs once eagerly (loading cuBLAS's and our
  // kernels) and is captured. A failure turns graphs off, with a message, instead of failing.
  void capture_all_graphs();
  // Captures the step whose padded plan is in graph_plan_dev_ (laid out as `lay`); false, with
  // graphs turned off, when the capture fails.
  bool capture(int32_t bucket, const PlanUploadLayout& lay);
  void upload_graph_plan(const StepPlan& padded, PlanUploadLayout* lay);
  void drop_graphs();
  void copy_logits_back(int64_t rows, std::vector<float>* logits);
  void upload_weights(const Bf16ModelSource& source);
  void upload_rope_table();
  // y[m, n] = x[m, k] · w[n, k]ᵀ, row-major, bf16 operands, fp32 accumulation.
  void gemm(const void* x, int64_t m, int64_t k, const void* w, int64_t n, void* y,
            cudaDataType_t y_type);

  ModelConfig c_;
  KvCacheSpec spec_;
  std::string summary_;
  int64_t bytes_per_token_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;

  DeviceMemory weights_;  // one arena: every matrix and norm vector
  const void *embed_ = nullptr, *lm_head_ = nullptr, *final_norm_ = nullptr;
  std::vector<DeviceLayer> layers_;
  DeviceMemory rope_;  // fp32 [max positions, head_dim]: cos half then sin half
  DeviceMemory kv_;    // per layer K then V, [num_blocks, block_size, kv_heads, head_dim] each
  int64_t kv_layer_bytes_ = 0;
  DeviceMemory cublas_workspace_;

  // Step buffers, grown (never shrunk) to the largest step seen; allocated up front for the
  // configured maximum so that the KV sizing accounts for them.
  StepShape capacity_;
  DeviceMemory residual_, x_, qkv_, attn_, gu_, act_, sel_, logits_;
  DeviceMemory plan_dev_;
  PinnedMemory plan_host_, logits_host_;

  // CUDA graphs for decode-only steps (graph_buckets.h), one per bucket, captured at start
  // (and again after the step buffers grow, which drops them: they hold the buffers'
  // addresses). They read their plan from graph_plan_dev_, sized once for the largest bucket.
  struct Graph {
    cudaGraphExec_t exec = nullptr;
  };
  bool graphs_enabled_ = true;
  std::vector<int32_t> buckets_;
  int32_t graph_width_ = 0;  // block-table columns of every graph: the longest context's blocks
  std::map<int32_t, Graph> graphs_;
  DeviceMemory graph_plan_dev_;
};

CudaExecutor::CudaExecutor(Bf16ModelSource source, const CudaExecutorOptions& o, KvCacheSpec* kv,
                           std::string* sizing)
    : c_(source.config) {
  if (o.block_size <= 0) throw std::invalid_argument("CudaExecutor: block_size must be >= 1");
  check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
  size_t free_bytes = 0, total_bytes = 0;
  // Measured before this executor allocates anything: what others hold is total - free.
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cublas(cublasCreate(&cublas_), "cublasCreate");
  check_cublas(cublasSetStream(cublas_, stream_), "cublasSetStream");
  // An explicit workspace, so cuBLAS allocates nothing behind the KV sizing's back.
  cublas_workspace_.reserve(kCublasWorkspace, "cuBLAS workspace");
  check_cublas(cublasSetWorkspace(cublas_, cublas_workspace_.get(), size_t(kCublasWorkspace)),
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
  if (cublas_ != nullptr) cublasDestroy(cublas_);
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

void CudaExecutor::drop_graphs() {
  for (auto& [bucket, g] : graphs_) {
    if (g.exec != nullptr) cudaGraphExecDestroy(g.exec);
  }
  graphs_.clear();
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
  check_cublas(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, int(n), int(m), int(k), &alpha, w,
                            CUDA_R_16BF, int(k), x, CUDA_R_16BF, int(k), &beta, y, y_type, int(n),
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
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

void CudaExecutor::upload_graph_plan(const StepPlan& padded, PlanUploadLayout* lay) {
  *lay = plan_upload_layout(padded);
  if (lay->total * 4 > graph_plan_dev_.bytes()) {
    throw std::logic_error("CudaExecutor: a padded plan outgrew the graph plan buffer");
  }
  plan_host_.reserve(lay->total * 4, "pinned plan");
  pack_plan(padded, *lay, static_cast<int32_t*>(plan_host_.get()));
  check_cuda(cudaMemcpyAsync(graph_plan_dev_.get(), plan_host_.get(), size_t(lay->total) * 4,
                             cudaMemcpyHostToDevice, stream_),
             "cudaMemcpyAsync (graph plan)");
}

void CudaExecutor::capture_all_graphs() {
  if (buckets_.empty() || graph_width_ < 1) {
    graphs_enabled_ = false;
    return;
  }
  const PlanUploadLayout largest =
      plan_upload_layout(graph_warmup_plan(buckets_.back(), graph_width_));
  graph_plan_dev_.reserve(largest.total * 4, "graph plan");
  for (int32_t bucket : buckets_) {
    PlanUploadLayout lay;
    upload_graph_plan(graph_warmup_plan(bucket, graph_width_), &lay);
    enqueue_step(lay, static_cast<const int32_t*>(graph_plan_dev_.get()));
    check_cuda(cudaStreamSynchronize(stream_), "graph warm-up step");
    if (!capture(bucket, lay)) return;
  }
}

bool CudaExecutor::capture(int32_t bucket, const PlanUploadLayout& lay) {
  cudaGraph_t graph = nullptr;
  check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
             "cudaStreamBeginCapture");
  std::string failure;
  try {
    enqueue_step(lay, static_cast<const int32_t*>(graph_plan_dev_.get()));
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // Ended in every case, so the stream is usable again whatever happened inside.
  const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
  cudaGraphExec_t exec = nullptr;
  if (failure.empty() && end == cudaSuccess) {
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    if (made != cudaSuccess)
      failure = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(made);
  } else if (failure.empty()) {
    failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(end);
  }
  if (graph != nullptr) cudaGraphDestroy(graph);
  if (!failure.empty()) {
    (void)cudaGetLastError();
    drop_graphs();
    graphs_enabled_ = false;
    std::fprintf(stderr,
                 "pagedserve: CUDA graph capture for %d sequences failed (%s); every step "
                 "runs eagerly\n",
                 bucket, failure.c_str());
    return false;
  }
  graphs_[bucket] = Graph{exec};
  return true;
}

bool CudaExecutor::try_graph_step(const StepPlan& plan) {
  if (!graphs_enabled_ || !is_graph_eligible(plan) || plan.max_blocks_per_seq > graph_width_) {
    return false;
  }
  const int32_t bucket = graph_bucket_for(plan.num_seqs(), buckets_);
  if (bucket == 0 || bucket > capacity_.rows || bucket > capacity_.tokens) return false;
  PlanUploadLayout lay;
  upload_graph_plan(pad_decode_plan(plan, bucket, graph_width_), &lay);
  auto found = graphs_.find(bucket);
  if (found == graphs_.end()) {
    // Dropped when the step buffers grew: captured again (capturing runs nothing).
    if (!capture(bucket, lay)) {
      enqueue_step(lay, static_cast<const int32_t*>(graph_plan_dev_.get()));
      return true;
    }
    found = graphs_.find(bucket);
  }
  check_cuda(cudaGraphLaunch(found->second.exec, stream_), "cudaGraphLaunch");
  return true;
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

}  // namespace

int64_t cuda_kv_bytes_per_block(const ModelConfig& c, int32_t block_size) {
  return 2 * int64_t{c.num_hidden_layers} * block_size * c.kv_size() * dtype_bytes(kAct);
}

std::unique_ptr<Executor> make_cuda_executor(Bf16ModelSource source, const CudaExecutorOptions& o,
                                             KvCacheSpec* kv, std::string* sizing) {
  return std::make_unique<CudaExecutor>(std::move(source), o, kv, sizing);
}

}  // namespace ps::cuda
