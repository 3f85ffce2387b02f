#pragma once
// The adapters resident in a ModelRunner, by slot, and the low-rank add of issue #22: after a
// base projection over a step's rows, y[rows of adapter g] += (x · Aᵀ) · (scale · B)ᵀ, grouped by
// adapter so each adapter's two small products run once per step over its rows, whatever the
// mix. Rows of the base model (slot -1) cost nothing. Includes ATen: model/ sources only.
#include <cstdint>
#include <memory>
#include <vector>

#include "cpu/lora_factors.h"
#include "scheduler/step_plan.h"

namespace ps {

class LoraBank {
 public:
  // Installs `adapter` in `slot` (null empties it). Throws std::invalid_argument on a negative
  // slot or an adapter packed for another layer count.
  void set(int32_t slot, std::shared_ptr<const LoraAdapter> adapter, int64_t num_layers);
  const LoraAdapter* get(int32_t slot) const;

  // Groups the step's rows by adapter slot (plan.lora_slot, one per sequence; empty: all base):
  // every packed row, and the sampled rows in sample_indices order. Throws std::invalid_argument
  // when a sequence names an empty slot.
  void begin_step(const StepPlan& plan);
  bool step_has_adapters() const { return !all_.empty(); }

  // Which rows x and y hold: all T rows of the step, or only the sampled rows (compacted).
  enum class Rows { kAll, kSampled };
  // y[i, site columns] += low-rank term of x[i] for the rows of every adapter with factors on
  // that site. x: [rows, in] with row stride ldx; y: row stride ldy.
  void add(int64_t layer, LoraSite site, Rows rows, const float* x, int64_t ldx, float* y,
           int64_t ldy);
  void add_lm_head(const float* x, int64_t ldx, float* y, int64_t ldy);  // sampled rows

 private:
  struct Group {
    const LoraPacked* adapter = nullptr;
    std::vector<int32_t> rows;
  };
  void add_groups(const std::vector<Group>& groups, int64_t layer, int site, const float* x,
                  int64_t ldx, float* y, int64_t ldy);

  std::vector<std::shared_ptr<const LoraAdapter>> slots_;
  std::vector<Group> all_, sampled_;
  // Grow-only scratch: the gathered rows, the first product [rows, sum of ranks], the second.
  struct Scratch {
    std::vector<float> v;
    float* get(int64_t n) {
      if (int64_t(v.size()) < n) v.resize(size_t(n));
      return v.data();
    }
  };
  Scratch x_, u_, d_;
};

}  // namespace ps
