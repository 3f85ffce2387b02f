#include "pth_export/pth_writer.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace ps {

void write_torch_state_dict(const std::string& path, const TorchNamedTensors& tensors) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [name, t] : tensors) dict.insert(name, t.contiguous());
  const std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(dict));
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) throw std::runtime_error(tmp + ": cannot write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error(path + ": cannot rename " + tmp + " into place");
  }
}

}  // namespace ps
