// ModelRunner's forward pass (model_runner.h): one packed forward over all of a step's tokens,
// layer by layer: attention (K/V written to and read from the paged cache) or a Gated DeltaNet
// mixer (the sequences' recurrent states), then the MLP; logits for the sampled rows only.
#include <cstring>
#include <vector>

#include "cpu/lowbit_weights.h"
#include "cpu/runner_impl.h"
#include "kernels/paged_attention.h"
#include "model/layer_types.h"

namespace ps {

using runner_detail::project;
using runner_detail::ptr;

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
      const int64_t ld = s.in_proj_rows();
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

}  // namespace ps
