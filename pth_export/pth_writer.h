#pragma once
// Writes a torch.save state_dict through libtorch's own pickler, so torch.load reads it exactly
// as Python would. Used by `pagedserve-train export` and the tests' .pth fixtures.
#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

namespace ps {

using TorchNamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// Writes `tensors` (a dict of name -> tensor) in the zip format torch.load reads, through a
// temporary file renamed into place.
void write_torch_state_dict(const std::string& path, const TorchNamedTensors& tensors);

}  // namespace ps
