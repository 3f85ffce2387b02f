#pragma once
// The error form of the checkpoint readers (safetensors_reader, loader) when one tensor is wrong:
// the file, then the tensor, then what is wrong with it.
#include <stdexcept>
#include <string>

namespace ps {

[[noreturn]] inline void fail_tensor(const std::string& file, const std::string& tensor,
                                     const std::string& message) {
  throw std::runtime_error(file + ": tensor '" + tensor + "': " + message);
}

}  // namespace ps
