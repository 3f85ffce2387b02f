#include "pth_export/export_pth.h"

#include <ATen/ATen.h>

#include "convert/convert_names.h"
#include "convert/convert_writer.h"
#include "model/model_weights.h"
#include "pth_export/pth_writer.h"
#include "torch_bridge/torch_tensor.h"

namespace ps {

int export_pth(const LoadedModel& model, const std::string& path, const ExportOptions& options) {
  const WeightDtype wd = parse_weight_dtype(options.dtype, "--dtype");
  const DType st = wd == WeightDtype::kBF16  ? DType::bf16
                   : wd == WeightDtype::kF16 ? DType::f16
                                             : DType::f32;
  ModelWeights w = *model.weights;
  TorchNamedTensors out;
  at::Tensor embed;
  for (const WeightSlot& slot : weight_slots(w)) {
    at::Tensor t = to_torch(slot.tensor->to(st));
    if (slot.name == "model.embed_tokens.weight") embed = t;
    out.emplace_back(options.minimind_names ? minimind_name(slot.name) : slot.name, t);
  }
  if (w.config.tie_word_embeddings) {
    // nn.Module.state_dict() lists a tied head too; the same tensor keeps the tie visible.
    out.emplace_back(options.minimind_names ? "output.weight" : "lm_head.weight", embed);
  }
  write_torch_state_dict(path, out);
  return static_cast<int>(out.size());
}

}  // namespace ps
