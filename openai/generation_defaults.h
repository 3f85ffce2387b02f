#pragma once
// A checkpoint's generation_config.json as request defaults: its temperature, top_p, top_k,
// min_p, repetition_penalty and max_new_tokens fill the fields a request leaves out, as vLLM's
// default `--generation-config auto` does. Fields the request sends always win.
#include <cstdint>
#include <optional>
#include <string>

namespace ps {

struct GenerationDefaults {
  std::optional<float> temperature;
  std::optional<float> top_p;
  std::optional<int32_t> top_k;
  std::optional<float> min_p;
  std::optional<float> repetition_penalty;
  std::optional<int32_t> max_new_tokens;  // caps max_tokens when the request gives none
  std::string source;                     // the file they came from ("" when none)

  bool empty() const {
    return !temperature && !top_p && !top_k && !min_p && !repetition_penalty && !max_new_tokens;
  }

  // Reads `path`; a missing file gives no defaults. Throws std::runtime_error naming the file
  // and field for malformed JSON or a value out of range (a field holding null is ignored).
  static GenerationDefaults from_file(const std::string& path);

  // "temperature=0.6 top_p=0.9 max_new_tokens=512", or "none".
  std::string describe() const;
};

}  // namespace ps
