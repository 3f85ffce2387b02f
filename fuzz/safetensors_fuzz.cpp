// libFuzzer target: the safetensors header parser on an arbitrary byte image. It may only throw
// std::runtime_error, never read outside the buffer (ASan), and what it accepts must describe
// tensors that lie inside the buffer with sizes that match their shapes and dtypes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

#include "checkpoint/safetensors_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ps::SafetensorsHeader h;
  try {
    h = ps::parse_safetensors(std::span<const uint8_t>(data, size), "fuzz");
  } catch (const std::runtime_error&) {
    return 0;
  }
  if (h.data_start < 8 || h.data_start > size) __builtin_trap();
  for (const auto& t : h.tensors) {
    if (t.begin < h.data_start || t.begin > t.end || t.end > size) __builtin_trap();
    if (static_cast<uint64_t>(t.numel()) * ps::dtype_size(t.dtype) != t.end - t.begin)
      __builtin_trap();
    if (h.find(t.name) == nullptr) __builtin_trap();
  }
  return 0;
}
