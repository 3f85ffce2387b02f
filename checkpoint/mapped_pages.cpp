#include "checkpoint/mapped_pages.h"

#include "checkpoint/safetensors_reader.h"

namespace ps {

void release_mapped_pages(const ModelWeights& weights, const Tensor& t) {
  if (!t.defined()) return;
  for (const auto& f : weights.mapped) {
    if (f->release_pages(t.data_ptr(), t.nbytes())) return;
  }
}

}  // namespace ps
