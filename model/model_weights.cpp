#include "model/model_weights.h"

namespace ps {

std::vector<WeightSlot> weight_slots(ModelWeights& w) {
  return basic_weight_slots<Tensor>(w);
}

void release_mapped_pages(const ModelWeights& weights, const Tensor& t) {
  if (!t.defined()) return;
  for (const auto& f : weights.mapped) {
    if (f->release_pages(t.data_ptr(), t.nbytes())) return;
  }
}

}  // namespace ps
