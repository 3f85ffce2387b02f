#include "cpu/lora_bank.h"
#include "kernels/parallel_for.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ps {
namespace {

// Rows per parallel chunk, so a chunk moves some tens of kilobytes.
int64_t grain_for(int64_t floats_per_row) {
  return std::max<int64_t>(1, 8192 / std::max<int64_t>(1, floats_per_row));
}

// The group's rows of x, packed: the products then run as two plain GEMMs on the runner's
// packed kernel (packed_linear.h).
void gather_rows(const std::vector<int32_t>& rows, const float* x, int64_t ldx, int64_t width,
                 float* out) {
  parallel_for(0, int64_t(rows.size()), grain_for(width), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      std::memcpy(out + i * width, x + int64_t{rows[size_t(i)]} * ldx, sizeof(float) * width);
    }
  });
}

// y[rows[i], col:col + width] += d[i, :].
void scatter_add_rows(const std::vector<int32_t>& rows, const float* d, int64_t width, float* y,
                      int64_t ldy, int64_t col) {
  parallel_for(0, int64_t(rows.size()), grain_for(width), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float* yr = y + int64_t{rows[size_t(i)]} * ldy + col;
      const float* dr = d + i * width;
      for (int64_t j = 0; j < width; ++j) yr[j] += dr[j];
    }
  });
}

}  // namespace

void LoraBank::set(int32_t slot, std::shared_ptr<const LoraAdapter> adapter, int64_t num_layers) {
  if (slot < 0) throw std::invalid_argument("LoraBank: negative slot " + std::to_string(slot));
  if (adapter && (!adapter->packed || int64_t(adapter->packed->layers.size()) != num_layers)) {
    throw std::invalid_argument("LoraBank: the adapter was packed for another model");
  }
  if (size_t(slot) >= slots_.size()) slots_.resize(size_t(slot) + 1);
  slots_[size_t(slot)] = std::move(adapter);
}

const LoraAdapter* LoraBank::get(int32_t slot) const {
  return slot >= 0 && size_t(slot) < slots_.size() ? slots_[size_t(slot)].get() : nullptr;
}

void LoraBank::begin_step(const StepPlan& plan) {
  all_.clear();
  sampled_.clear();
  if (plan.lora_slot.empty()) return;
  // Slot -> group index, built in first-seen order; a handful of adapters per step at most.
  std::vector<int32_t> group_of;
  auto group = [&](std::vector<Group>& groups, int32_t slot) -> Group& {
    if (size_t(slot) >= group_of.size()) group_of.resize(size_t(slot) + 1, -1);
    int32_t& g = group_of[size_t(slot)];
    if (g < 0) {
      g = int32_t(groups.size());
      groups.push_back(Group{get(slot)->packed.get(), {}});
    }
    return groups[size_t(g)];
  };
  for (int32_t s = 0; s < plan.num_seqs(); ++s) {
    const int32_t slot = plan.lora_slot[size_t(s)];
    if (slot < 0) continue;
    if (get(slot) == nullptr) {
      throw std::invalid_argument("ModelRunner: sequence " +
                                  std::to_string(plan.seq_ids[size_t(s)]) + " uses LoRA slot " +
                                  std::to_string(slot) + ", which holds no adapter");
    }
    Group& g = group(all_, slot);
    for (int32_t row = plan.query_start[size_t(s)]; row < plan.query_start[size_t(s) + 1]; ++row) {
      g.rows.push_back(row);
    }
  }
  std::fill(group_of.begin(), group_of.end(), -1);
  // The sampled rows in logit order: 1 + drafts rows per sample index (speculative decoding).
  int32_t out_row = 0;
  for (size_t i = 0; i < plan.sample_indices.size(); ++i) {
    const int32_t slot = plan.lora_slot[size_t(plan.sample_indices[i])];
    for (int32_t k = 0; k <= plan.drafts_of(i); ++k, ++out_row) {
      if (slot >= 0) group(sampled_, slot).rows.push_back(out_row);
    }
  }
  // Then the prompt rows (prompt logprobs), in the same logit order.
  for (const StepPlan::PromptRows& p : plan.prompt_rows) {
    const int32_t slot = plan.lora_slot[size_t(p.seq_index)];
    for (int32_t r = p.begin; r < p.end; ++r, ++out_row) {
      if (slot >= 0) group(sampled_, slot).rows.push_back(out_row);
    }
  }
}

void LoraBank::add_groups(const std::vector<Group>& groups, int64_t layer, int site, const float* x,
                          int64_t ldx, float* y, int64_t ldy) {
  for (const Group& g : groups) {
    const LoraSiteFactors& f =
        site < 0 ? g.adapter->lm_head : g.adapter->layers[size_t(layer)][size_t(site)];
    if (f.empty() || g.rows.empty()) continue;
    const int64_t n = int64_t(g.rows.size()), in = f.a.k(), r = f.a.n();
    float* xg = x_.get(n * in);
    gather_rows(g.rows, x, ldx, in, xg);
    // First product, all the site's modules at once: u = x · Aᵀ, [n, sum of ranks].
    float* u = u_.get(n * r);
    packed_linear({.x = xg, .w = &f.a, .y = u, .m = n});
    // Second, per module into its column range: d = u[:, its ranks] · (scale · B)ᵀ.
    for (const auto& p : f.parts) {
      const int64_t out = p.b.n();
      float* d = d_.get(n * out);
      packed_linear({.x = u + p.r_begin, .w = &p.b, .y = d, .m = n, .ldx = r});
      scatter_add_rows(g.rows, d, out, y, ldy, p.col);
    }
  }
}

void LoraBank::add(int64_t layer, LoraSite site, Rows rows, const float* x, int64_t ldx, float* y,
                   int64_t ldy) {
  add_groups(rows == Rows::kAll ? all_ : sampled_, layer, int(site), x, ldx, y, ldy);
}

void LoraBank::add_lm_head(const float* x, int64_t ldx, float* y, int64_t ldy) {
  add_groups(sampled_, 0, -1, x, ldx, y, ldy);
}

}  // namespace ps
