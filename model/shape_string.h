#pragma once
// "[2, 3]": how error messages print a tensor shape (loader, convert, merge-lora).
#include <cstdint>
#include <string>
#include <vector>

namespace ps {

inline std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace ps
