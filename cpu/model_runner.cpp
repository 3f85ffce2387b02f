// The CPU executor (model_runner.h): the runner's construction and accessors. The forward
// pass is runner_forward.cpp's; packing the checkpoint's weights is packed_layer.cpp's.
#include "cpu/model_runner.h"
#include "cpu/runner_impl.h"

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

}  // namespace

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
  check_compute_dtype(options);
  options.kv_cache_dtype = kv_cache_dtype_for(*m.weights, options.kv_cache_dtype);
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
  if (options.compute_dtype == ComputeDtype::bf16) {
    m.kernel_summary += "; compute bfloat16 (avx512_bf16 dot products)";
  } else if (options.compute_dtype == ComputeDtype::int8) {
    m.kernel_summary += std::string("; compute int8 (") + int8_dot_unit(active_kernel_isa()) +
                        " dot products, activations per token)";
  }
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
      throw std::invalid_argument(
          "ModelRunner: a model with linear-attention layers needs state "
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
  check_state_copies(plan, impl_->spec.num_state_slots, impl_->spec.num_state_snapshots);
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
