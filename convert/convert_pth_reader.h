#pragma once
// Reads what Python's torch.save writes (the zip format: <archive>/data.pkl plus one record per
// storage) into named tensors, without Python or libtorch.
//
// The pickle itself is run by convert_pickle.h (libtorch's pickle_load cannot read state_dicts).
#include <string>
#include <utility>
#include <vector>

#include "model/tensor.h"

namespace ps {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// The tensors of a state_dict saved with torch.save, in file order. Accepts a plain dict or
// OrderedDict of name -> tensor, or one wrapped as {"model": sd} / {"state_dict": sd} (other
// entries of the wrapper, like optimizer state or step counters, are ignored). Tensors are
// contiguous CPU copies in their stored dtype; tensors that shared storage in Python (tied
// weights) still share data here. Throws std::runtime_error naming `path` and the offending key
// for anything else: not a zip, the legacy pre-1.6 format, a pickled module or list, a non-tensor
// value inside the state_dict, storage records that are missing or too short.
NamedTensors read_torch_state_dict(const std::string& path);

}  // namespace ps
