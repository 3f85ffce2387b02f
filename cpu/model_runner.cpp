// The CPU executor (model_runner.h): the packed forward pass of one step and the runner's
// construction. Packing the checkpoint's weights is packed_layer.cpp's.
#include "cpu/model_runner.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "checkpoint/mapped_pages.h"
#include "cpu/kv_cache_pages.h"
#include "cpu/linear_attention_layer.h"
#include "cpu/lora_bank.h"
#include "cpu/lowbit_weights.h"
#include "cpu/moe_layer.h"
#include "cpu/packed_layer.h"
#include "cpu/projection.h"
#include "cpu/runner_ops.h"
#include "kernels/paged_attention.h"
#include "kernels/parallel_for.h"
#include "model/layer_types.h"
#include "model/model_weights.h"
#include "model/step_plan_check.h"

namespace ps {
namespace {

const float* ptr(const Tensor& t) {
  return t.defined() ? t.data_ptr<float>() : nullptr;
}

// y[m, n] (= or +=) x[m, k] · wᵀ (+ bias).
void project(const float* x, int64_t m, const Projection& w, const Tensor& bias, float* y,
             bool accumulate = false) {
  w.run(x, m, ptr(bias), y, accumulate);
}

// Grow-only scratch: a step reuses the previous step's memory (fresh multi-megabyte buffers
// per step would be page-faulted and zeroed by the kernel every time).
struct Buffer {
  std::vector<float> v;
  float* get(int64_t n) {
    if (int64_t(v.size()) < n) v.resize(size_t(n));
    return v.data();
  }
};

void set_threads_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    // All intra-op parallelism (our kernels, and libtorch/OpenBLAS ops) shares one OpenMP pool
    // sized to the machine; nothing else in the engine spawns compute threads. OMP_NUM_THREADS,
    // when set, wins (benchmarks pin it; a shared machine may want fewer).
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    if (!kernels_parallel() && cores > 1) {
      std::fprintf(stderr,
                   "pagedserve: model kernels were built without -fopenmp and run on one core "
                   "(link pagedserve_model to OpenMP::OpenMP_CXX)\n");
    }
    if (std::getenv("OMP_NUM_THREADS") != nullptr) return;
    omp_set_num_threads(static_cast<int>(cores));
  });
}

// A hybrid model's plan names one distinct state slot per sequence, and state copies within
// the snapshots and the sequences' rows; others name none.
void check_state_slots(const StepPlan& plan, int32_t num_slots, int32_t num_snapshots) {
  if (num_slots == 0) {
    if (!plan.state_slots.empty() || !plan.state_restores.empty() ||
        !plan.state_snapshots.empty()) {
      throw std::invalid_argument("StepPlan: state slots given to a model without linear layers");
    }
    return;
  }
  auto check_copy = [&](const StepPlan::StateCopy& c, bool restore) {
    bool ok = c.seq_index >= 0 && c.seq_index < plan.num_seqs() && c.snapshot >= 0 &&
              c.snapshot < num_snapshots;
    if (ok) {
      const int32_t begin = plan.query_start[size_t(c.seq_index)];
      const int32_t end = plan.query_start[size_t(c.seq_index) + 1];
      const int32_t first = begin < end ? plan.positions[size_t(begin)] : -1;
      // A restore is the state before the first new row; a snapshot one after one of them.
      ok = restore ? first == c.num_tokens
                   : first >= 0 && c.num_tokens > first && c.num_tokens <= first + (end - begin);
    }
    if (!ok) {
      throw std::invalid_argument("StepPlan: a state " + std::string(restore ? "restore" : "snapshot") +
                                  " names no row of its sequence or snapshot " +
                                  std::to_string(c.snapshot) + " of " +
                                  std::to_string(num_snapshots));
    }
  };
  for (const auto& c : plan.state_restores) check_copy(c, true);
  for (const auto& c : plan.state_snapshots) check_copy(c, false);
  if (plan.state_slots.size() != size_t(plan.num_seqs())) {
    throw std::invalid_argument("StepPlan: a model with linear-attention layers needs one state "
                                "slot per sequence");
  }
  std::vector<bool> seen(size_t(num_slots), false);
  for (int32_t slot : plan.state_slots) {
    if (slot < 0 || slot >= num_slots || seen[size_t(slot)]) {
      throw std::invalid_argument("StepPlan: state slot " + std::to_string(slot) +
                                  " is out of range or named twice (" +
                                  std::to_string(num_slots) + " slots)");
    }
    seen[size_t(slot)] = true;
  }
}

}  // namespace

struct ModelRunner::Impl {
  std::shared_ptr<const ModelWeights> weights;
  ModelConfig c;
  KvCacheSpec spec;
  Tensor embed, final_norm;
  Projection lm_head;
  // A tied embedding is read from lm_head's panels (the same values): its mapped checkpoint
  // pages are then never touched. Each lookup had faulted in a whole page-cache folio (up to
  // 2 MB on ext4 with large folios): 244 MB of the 311 MB table for a 256-token prompt.
  bool embed_from_lm_head = false;
  std::vector<PackedLayer> layers;
  std::vector<Tensor> k_cache, v_cache;  // per layer [blocks, block_size, kv_heads, hd]
  bool split_pools = false;  // sliding layers' caches are the sliding pool's (KvCacheSpec)
  KvCacheDtype kv_dtype = KvCacheDtype::f32;
  RopeFrequencies rope;        // inv_freq [rotary_dim / 2], attention factor
  RopeFrequencies rope_local;  // sliding layers' (Gemma 3's rope_local_base_freq)
  bool local_rope = false;     // rope_local differs from rope: its own tables each step
  float embed_scale = 1.0f;    // Gemma: sqrt(hidden_size) in the embedding's dtype
  Buffer x, h, qkv, attn, gu, act, cos, sin, cos_local, sin_local, sel_x, sel_attn, branch;
  MoeScratch moe_scratch;
  RecurrentStates states;  // the linear layers' per-slot states (a hybrid model's)
  std::vector<float> linear_scratch;
  std::vector<int32_t> sample_rows;
  std::string kernel_summary;
  LoraBank lora;  // resident adapters; their low-rank terms follow each base projection

  // The step's cos/sin tables: one set, or two when sliding layers rotate by their own base.
  void rope_tables(const StepPlan& plan) {
    const int64_t T = plan.num_tokens(), half = rope.rotary_dim / 2;
    rope_cos_sin(rope, plan.positions.data(), T, cos.get(T * half), sin.get(T * half));
    if (local_rope) {
      rope_cos_sin(rope_local, plan.positions.data(), T, cos_local.get(T * half),
                   sin_local.get(T * half));
    }
  }

  void forward(const StepPlan& plan, std::vector<float>* logits);

  // A sequence whose step starts at position 0 (a new one, or one preempted and recomputed)
  // starts from zero recurrent states; the others continue from their slot's.
  void reset_started_states(const StepPlan& plan) {
    if (states.num_slots() == 0) return;
    // A prefix hit starts from the snapshot of its boundary (kvcache/state_snapshots.h).
    for (const StepPlan::StateCopy& r : plan.state_restores) {
      states.copy(spec.num_state_slots + r.snapshot, plan.state_slots[size_t(r.seq_index)]);
    }
    for (int32_t i = 0; i < plan.num_seqs(); ++i) {
      const int32_t begin = plan.query_start[size_t(i)];
      if (plan.query_start[size_t(i) + 1] > begin && plan.positions[size_t(begin)] == 0) {
        states.reset(plan.state_slots[size_t(i)]);
      }
    }
  }

  // bytes_of(projection) summed over every projection (lm_head and each layer's four), plus
  // moe_bytes(layer) for each sparse layer.
  template <typename BytesOf, typename MoeBytes>
  int64_t sum_over_projections(BytesOf bytes_of, MoeBytes moe_bytes) const {
    int64_t total = bytes_of(lm_head);
    for (const PackedLayer& l : layers) {
      total += bytes_of(l.qkv) + bytes_of(l.o_proj) + bytes_of(l.gate_up) + bytes_of(l.down);
      if (l.linear) total += bytes_of(l.linear_in);
      if (l.moe) total += moe_bytes(*l.moe);
    }
    return total;
  }
  // The projections' bytes held, and those one decode step (M = 1) reads: fewer when a plan
  // keeps a dense copy for OpenBLAS at large M, and only k experts of a sparse layer.
  int64_t projection_bytes_held() const {
    return sum_over_projections([](const Projection& p) { return p.bytes(); },
                                [](const MoeLayer& m) { return m.bytes_held(); });
  }
  int64_t weight_bytes_per_token() const {
    return sum_over_projections([](const Projection& p) { return p.bytes_read(1); },
                                [](const MoeLayer& m) { return m.bytes_read_per_token(); });
  }
};

void ModelRunner::Impl::forward(const StepPlan& plan, std::vector<float>* logits) {
  const int64_t T = plan.num_tokens();
  sample_rows = plan.logit_rows();
  const int64_t R = int64_t(sample_rows.size());
  const int64_t H = c.hidden_size, Q = c.q_size(), KV = c.kv_size(), I = c.intermediate_size;
  const int64_t QKV = Q + 2 * KV;
  logits->resize(size_t(R * c.vocab_size));
  if (T == 0) return;

  float* xs = x.get(T * H);
  if (embed_from_lm_head) {
    lm_head.gather_rows(plan.token_ids.data(), T, xs);  // can_gather_rows() held at load
  } else {
    gather_embedding_rows(embed, plan.token_ids.data(), T, xs);
  }
  if (c.gemma_layout()) scale_in_place(xs, T * H, embed_scale);
  rope_tables(plan);
  lora.begin_step(plan);
  reset_started_states(plan);
  const bool adapters = lora.step_has_adapters();
  using Rows = LoraBank::Rows;

  PagedAttentionArgs pa;
  pa.block_tables = plan.block_tables.data();
  pa.max_blocks_per_seq = plan.max_blocks_per_seq;
  pa.query_start = plan.query_start.data();
  pa.context_len = plan.context_len.data();
  pa.num_seqs = plan.num_seqs();
  pa.num_heads = c.num_attention_heads;
  pa.num_kv_heads = c.num_key_value_heads;
  pa.head_dim = c.head_dim;
  pa.block_size = spec.block_size;
  pa.scale = c.attention_scale();
  pa.softcap = c.attn_logit_softcapping;
  pa.out_row_stride = Q;

  const int64_t L = int64_t(layers.size());
  int32_t linear_layer = 0;  // the index of the next linear layer among the linear ones
  for (int64_t l = 0; l < L; ++l) {
    const PackedLayer& w = layers[l];
    const bool last = l == L - 1;
    float* hs = h.get(T * H);
    rms_norm_rows(xs, H, nullptr, T, H, ptr(w.input_norm), c.rms_norm_eps, hs, H);
    // The mixer's output rows, `width` floats each, for o_proj (out_proj in a linear layer).
    float* mixed = nullptr;
    int64_t width = Q;
    if (w.linear) {
      const LinearAttentionShape& s = c.linear;
      const int64_t ld = s.conv_dim() + s.value_dim() + 2 * int64_t{s.num_value_heads};
      float* in = qkv.get(T * ld);
      project(hs, T, w.linear_in, {}, in);
      LinearMixerArgs la;
      la.weights = &w;
      la.shape = &s;
      la.eps = c.rms_norm_eps;
      la.linear_layer = linear_layer++;
      la.in = in;
      la.ld = ld;
      la.out = mixed = attn.get(T * s.value_dim());
      la.snapshot_base = spec.num_state_slots;
      width = s.value_dim();
      // Every row advances the state, sampled or not.
      run_linear_mixer(la, plan, states, &linear_scratch);
      if (last && R == 0) break;
    } else {
      // Qwen3.5's gated attention appends every head's output gate after q, k and v.
      const int64_t ld = QKV + (w.output_gate ? Q : 0);
      float* qkvs = qkv.get(T * ld);
      project(hs, T, w.qkv, w.qkv_bias, qkvs);
      if (adapters) lora.add(l, LoraSite::kQkv, Rows::kAll, hs, H, qkvs, ld);
      QkRopeArgs qr;
      qr.qkv = qkvs;
      qr.ld = ld;
      qr.rows = T;
      qr.num_heads = c.num_attention_heads;
      qr.num_kv_heads = c.num_key_value_heads;
      qr.head_dim = c.head_dim;
      qr.rotary_dim = rope.rotary_dim;
      qr.rotate = c.layer_uses_rope(int32_t(l));
      qr.q_norm = ptr(w.q_norm);
      qr.k_norm = ptr(w.k_norm);
      qr.eps = c.rms_norm_eps;
      const bool local = local_rope && c.layer_is_sliding(int32_t(l));
      qr.cos = (local ? cos_local : cos).v.data();
      qr.sin = (local ? sin_local : sin).v.data();
      qk_norm_rope(qr);
      void* kc = k_cache[size_t(l)].data_ptr();
      void* vc = v_cache[size_t(l)].data_ptr();
      // A sliding layer of a split cache lives in the sliding pool (kvcache/kv_pools.h).
      const bool own_pool = split_pools && c.layer_is_sliding(int32_t(l));
      const int32_t* slots = (own_pool ? plan.sliding_slot_mapping : plan.slot_mapping).data();
      if (kv_dtype == KvCacheDtype::bf16) {
        write_kv_cache_bf16(qkvs + Q, qkvs + Q + KV, ld, slots, int32_t(T), int32_t(KV),
                            static_cast<uint16_t*>(kc), static_cast<uint16_t*>(vc));
      } else {
        write_kv_cache(qkvs + Q, qkvs + Q + KV, ld, slots, int32_t(T), int32_t(KV),
                       static_cast<float*>(kc), static_cast<float*>(vc));
      }
      // The last layer's output is only read at the sampled rows: past its K/V write, it runs
      // on those R rows alone (and not at all on a step that samples nothing).
      if (last && R == 0) break;
      pa.q = qkvs;
      pa.q_row_stride = ld;
      pa.window = c.layer_window(int32_t(l));
      pa.block_tables = (own_pool ? plan.sliding_block_tables : plan.block_tables).data();
      pa.sinks = ptr(w.sinks);
      pa.set_cache(kc, vc, kv_dtype == KvCacheDtype::bf16);
      pa.out = mixed = attn.get(T * Q);
      paged_attention(pa);
      if (w.output_gate) sigmoid_gate_rows(qkvs + QKV, ld, T, Q, mixed, Q);
    }
    int64_t M = T;
    float* attn_rows = mixed;
    if (last && R < T) {
      float* sx = sel_x.get(R * H);
      attn_rows = sel_attn.get(R * width);
      for (int64_t r = 0; r < R; ++r) {
        std::memcpy(sx + r * H, xs + int64_t{sample_rows[r]} * H, sizeof(float) * H);
        std::memcpy(attn_rows + r * width, mixed + int64_t{sample_rows[r]} * width,
                    sizeof(float) * width);
      }
      xs = sx;
      M = R;
    }
    const Rows rows = M < T ? Rows::kSampled : Rows::kAll;
    // Gemma normalizes the branch's output before the residual add; the others fuse the add.
    float* out = w.attn_out_norm.defined() ? branch.get(M * H) : xs;
    project(attn_rows, M, w.o_proj, w.o_bias, out, /*accumulate=*/out == xs);
    if (adapters) lora.add(l, LoraSite::kOProj, rows, attn_rows, width, out, H);
    if (out != xs) {
      rms_norm_rows(out, H, nullptr, M, H, ptr(w.attn_out_norm), c.rms_norm_eps, out, H);
      add_into(out, M * H, xs);
    }
    rms_norm_rows(xs, H, nullptr, M, H, ptr(w.post_norm), c.rms_norm_eps, hs, H);
    if (w.moe) {
      w.moe->run(hs, M, xs, &moe_scratch);
      continue;
    }
    float* gus = gu.get(M * 2 * I);
    project(hs, M, w.gate_up, {}, gus);
    if (adapters) lora.add(l, LoraSite::kGateUp, rows, hs, H, gus, 2 * I);
    float* acts = act.get(M * I);
    if (c.gemma_layout()) {
      gelu_tanh_mul_rows(gus, M, I, acts);
    } else {
      silu_mul_rows(gus, M, I, acts);
    }
    out = w.mlp_out_norm.defined() ? branch.get(M * H) : xs;
    project(acts, M, w.down, {}, out, /*accumulate=*/out == xs);
    if (adapters) lora.add(l, LoraSite::kDown, rows, acts, I, out, H);
    if (out != xs) {
      rms_norm_rows(out, H, nullptr, M, H, ptr(w.mlp_out_norm), c.rms_norm_eps, out, H);
      add_into(out, M * H, xs);
    }
  }
  if (R == 0) return;
  // After the loop xs holds exactly the R sampled rows in order (the last layer compacted
  // them) unless every row samples, in which case row r is sample_rows[r].
  float* hs = h.get(R * H);
  const bool compacted = R < T;
  rms_norm_rows(xs, H, compacted ? nullptr : sample_rows.data(), R, H, ptr(final_norm),
                c.rms_norm_eps, hs, H);
  project(hs, R, lm_head, {}, logits->data());
  if (adapters) lora.add_lm_head(hs, H, logits->data(), c.vocab_size);
  if (c.final_logit_softcapping > 0) {
    soft_cap_in_place(logits->data(), R * c.vocab_size, c.final_logit_softcapping);
  }
}

ModelRunner::ModelRunner(std::shared_ptr<const ModelWeights> weights, KvCacheSpec spec,
                         RunnerOptions options)
    : impl_(std::make_unique<Impl>()) {
  if (!weights) throw std::invalid_argument("ModelRunner: no weights");
  if (spec.num_blocks <= 0 || spec.block_size <= 0) {
    throw std::invalid_argument("ModelRunner: KV cache needs num_blocks > 0 and block_size > 0");
  }
  set_threads_once();
  Impl& m = *impl_;
  m.weights = std::move(weights);
  m.c = m.weights->config;
  m.spec = spec;
  const ModelConfig& c = m.c;
  if (c.head_dim % 2 != 0 || c.num_attention_heads % c.num_key_value_heads != 0 ||
      int64_t(m.weights->layers.size()) != c.num_hidden_layers) {
    throw std::invalid_argument("ModelRunner: config and weights disagree");
  }
  m.embed = matrix(m.weights->embed_tokens, "embed_tokens");
  m.final_norm = norm_weight(m.weights->norm, c, "norm");
  const Tensor lm_head =
      m.weights->lm_head.defined() ? matrix(m.weights->lm_head, "lm_head") : m.embed;
  const std::vector<int64_t> table_shape{c.vocab_size, c.hidden_size};
  if (m.embed.sizes() != table_shape || lm_head.sizes() != table_shape) {
    throw std::invalid_argument("ModelRunner: embedding or lm_head shape does not match config");
  }
  LinearTuner tuner(options.linear_mode, options.tuning_budget_s, options.tuning_cache);
  m.lm_head = projection(lm_head, tuner, options);
  release_mapped_pages(*m.weights, lm_head);
  const PanelFormat embed_format = panel_format_of(m.embed.dtype());
  const bool tied =
      !m.weights->lm_head.defined() || m.weights->lm_head.is_same(m.weights->embed_tokens);
  m.embed_from_lm_head =
      tied && m.lm_head.can_gather_rows() && m.lm_head.packed_format() == embed_format;
  for (const LayerWeights& l : m.weights->layers) {
    m.layers.push_back(pack_layer(l, c, tuner, options));
    release_layer_pages(*m.weights, l);
  }
  m.kernel_summary = tuner.summary() + "; weights " + panel_format_name(m.lm_head.packed_format()) +
                     " (" + std::to_string(m.weight_bytes_per_token() / 1000000) +
                     " MB read per token)" + "; kv cache " +
                     kv_cache_dtype_name(options.kv_cache_dtype);
  m.kv_dtype = options.kv_cache_dtype;
  const DType kv_type = m.kv_dtype == KvCacheDtype::bf16 ? DType::bf16 : DType::f32;
  m.rope = rope_frequencies(c);
  m.rope_local = sliding_rope_frequencies(c);
  m.local_rope = m.rope_local.inv_freq != m.rope.inv_freq ||
                 m.rope_local.attention_factor != m.rope.attention_factor;
  // HF Gemma scales the embeddings by sqrt(hidden_size) cast to the weights' dtype.
  m.embed_scale = std::sqrt(float(c.hidden_size));
  if (m.embed.dtype() != DType::f32) {
    m.embed_scale = Tensor::from_floats({&m.embed_scale, 1}, {1}).to(m.embed.dtype()).value_at(0);
  }
  m.split_pools = spec.num_sliding_blocks > 0;
  if (c.num_linear_layers() > 0) {
    if (spec.num_state_slots <= 0) {
      throw std::invalid_argument("ModelRunner: a model with linear-attention layers needs state "
                                  "slots (KvCacheSpec::num_state_slots)");
    }
    m.states = RecurrentStates(c, spec.num_state_slots + spec.num_state_snapshots);
  }
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    if (c.layer_is_linear(l)) {  // its state lives in the state slots instead
      m.k_cache.emplace_back();
      m.v_cache.emplace_back();
      continue;
    }
    const int32_t blocks =
        m.split_pools && c.layer_is_sliding(l) ? spec.num_sliding_blocks : spec.num_blocks;
    // Zeros that take memory only once written (kv_cache_pages.h says why).
    m.k_cache.push_back(lazily_committed_zeros(
        {blocks, spec.block_size, c.num_key_value_heads, c.head_dim}, kv_type));
    m.v_cache.push_back(lazily_committed_zeros(
        {blocks, spec.block_size, c.num_key_value_heads, c.head_dim}, kv_type));
  }
}

ModelRunner::~ModelRunner() = default;

void ModelRunner::forward(const StepPlan& plan, std::vector<float>* logits) {
  if (logits == nullptr) throw std::invalid_argument("ModelRunner::forward: logits is null");
  if (plan.empty() && plan.token_ids.empty()) {  // nothing scheduled (query_start may be empty)
    logits->clear();
    return;
  }
  check_step_plan(plan, impl_->c, impl_->spec.num_blocks, impl_->spec.block_size,
                  impl_->spec.num_sliding_blocks);
  check_state_slots(plan, impl_->spec.num_state_slots, impl_->spec.num_state_snapshots);
  impl_->forward(plan, logits);
}

void ModelRunner::set_lora_adapter(int32_t slot, std::shared_ptr<const LoraAdapter> adapter) {
  impl_->lora.set(slot, std::move(adapter), impl_->c.num_hidden_layers);
}

const ModelConfig& ModelRunner::config() const {
  return impl_->c;
}

const std::string& ModelRunner::kernel_summary() const {
  return impl_->kernel_summary;
}

int64_t ModelRunner::kv_bytes_per_block(const ModelConfig& c, int32_t block_size,
                                        KvCacheDtype dtype) {
  // Linear-attention layers keep no K/V: their state is per sequence (RecurrentStates).
  const int64_t layers = int64_t{c.num_hidden_layers} - c.num_linear_layers();
  return 2 * layers * block_size * c.kv_size() * kv_cache_dtype_bytes(dtype);
}

int64_t ModelRunner::weight_bytes() const {
  const Impl& m = *impl_;
  auto bytes = [](const Tensor& t) { return t.defined() ? int64_t(t.nbytes()) : 0; };
  int64_t total =
      m.projection_bytes_held() + (m.embed_from_lm_head ? 0 : bytes(m.embed)) + bytes(m.final_norm);
  for (const PackedLayer& l : m.layers) {
    total += bytes(l.input_norm) + bytes(l.qkv_bias) + bytes(l.q_norm) + bytes(l.k_norm) +
             bytes(l.post_norm) + bytes(l.attn_out_norm) + bytes(l.mlp_out_norm) + bytes(l.o_bias) +
             bytes(l.sinks) + bytes(l.conv_weight) + bytes(l.neg_exp_a) + bytes(l.dt_bias) +
             bytes(l.gated_norm);
  }
  return total;
}

int64_t ModelRunner::weight_bytes_per_token() const {
  return impl_->weight_bytes_per_token();
}

}  // namespace ps
