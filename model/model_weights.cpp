#include "model/model_weights.h"

namespace ps {

std::vector<WeightSlot> weight_slots(ModelWeights& w) {
  return basic_weight_slots<Tensor>(w);
}

}  // namespace ps
