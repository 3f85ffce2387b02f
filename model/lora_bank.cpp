#include "model/lora_bank.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ps {
namespace {

// Rows per parallel chunk, so a chunk does some tens of thousands of multiply-adds.
int64_t grain_for(int64_t work_per_row) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, work_per_row));
}

// u[i, k] = x[rows[i]] · a[k]: the first product, gathering the group's rows as it reads them.
void down_project(const LoraSiteFactors& f, const std::vector<int32_t>& rows, const float* x,
                  int64_t ldx, float* u) {
  const int64_t n = int64_t(rows.size()), r = f.a.size(0), in = f.a.size(1);
  const float* a = f.a.data_ptr<float>();
  at::parallel_for(0, n, grain_for(r * in), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float* xr = x + int64_t{rows[size_t(i)]} * ldx;
      for (int64_t k = 0; k < r; ++k) {
        const float* ak = a + k * in;
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < in; ++j) s += xr[j] * ak[j];
        u[i * r + k] = s;
      }
    }
  });
}

// y[rows[i], part columns] += u[i, part ranks] · b_t: the second product, scattered as it writes.
void up_project_add(const LoraSiteFactors& f, const std::vector<int32_t>& rows, const float* u,
                    float* y, int64_t ldy) {
  const int64_t n = int64_t(rows.size()), r = f.a.size(0);
  int64_t work = 0;
  for (const auto& p : f.parts) work += p.rank * p.b_t.size(1);
  at::parallel_for(0, n, grain_for(work), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float* yr = y + int64_t{rows[size_t(i)]} * ldy;
      for (const auto& p : f.parts) {
        const int64_t out = p.b_t.size(1);
        const float* bt = p.b_t.data_ptr<float>();
        float* yc = yr + p.col;
        for (int64_t k = 0; k < p.rank; ++k) {
          const float c = u[i * r + p.r_begin + k];
          const float* bk = bt + k * out;
#pragma omp simd
          for (int64_t j = 0; j < out; ++j) yc[j] += c * bk[j];
        }
      }
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
  for (size_t r = 0; r < plan.sample_indices.size(); ++r) {
    const int32_t slot = plan.lora_slot[size_t(plan.sample_indices[r])];
    if (slot >= 0) group(sampled_, slot).rows.push_back(int32_t(r));
  }
}

void LoraBank::add_groups(const std::vector<Group>& groups, int64_t layer, int site, const float* x,
                          int64_t ldx, float* y, int64_t ldy) {
  for (const Group& g : groups) {
    const LoraSiteFactors& f =
        site < 0 ? g.adapter->lm_head : g.adapter->layers[size_t(layer)][size_t(site)];
    if (f.empty() || g.rows.empty()) continue;
    const int64_t need = int64_t(g.rows.size()) * f.a.size(0);
    if (int64_t(u_.size()) < need) u_.resize(size_t(need));
    down_project(f, g.rows, x, ldx, u_.data());
    up_project_add(f, g.rows, u_.data(), y, ldy);
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
