#pragma once
// `pagedserve export`: a checkpoint -> a torch.save state_dict that PyTorch's torch.load reads,
// for going back to a PyTorch training loop. Torch-free header: app/ calls it.
#include <string>

#include "checkpoint/loader.h"

namespace ps {

struct ExportOptions {
  bool minimind_names = false;  // tok_embeddings / layers.N.attention.wq / ... instead of HF names
  std::string dtype = "f32";    // f32 | bf16 | f16
};

// Writes every tensor of `model` (lm_head too when tied, as nn.Module.state_dict() does, sharing
// the embedding's storage) to `path` through a temporary file. Returns the tensor count.
int export_pth(const LoadedModel& model, const std::string& path, const ExportOptions& options);

}  // namespace ps
