// libFuzzer target: request JSON -> OpenAiRequest -> SamplingParams. The parser must never
// throw, and whatever it accepts must be a SamplingParams the engine's own validate() accepts
// (the HTTP layer and the engine check the same rules twice; they must agree).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <variant>

#include "openai/openai_request.h"
#include "sampling/sampling_params.h"

namespace {

constexpr int32_t kVocab = 6400;
constexpr int32_t kMaxModelLen = 4096;

[[noreturn]] void bug(const char* what) {
  __builtin_trap();  // libFuzzer records the input; `what` names the broken invariant below
  (void)what;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the endpoint and the server limits, the rest is the body.
  const ps::Endpoint endpoint = (data[0] & 1) ? ps::Endpoint::kChat : ps::Endpoint::kCompletion;
  ps::RequestLimits limits;
  limits.vocab_size = kVocab;
  limits.max_n = 1 + (data[0] >> 4);
  limits.max_tokens_limit = (data[0] & 2) ? 512 : 0;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);

  auto parsed = ps::parse_openai_request(body, endpoint, limits);
  if (auto* e = std::get_if<ps::ApiError>(&parsed)) {
    if (e->status < 400 || e->status > 499 || e->message.empty()) bug("a refusal must be a 4xx");
    return 0;
  }
  auto& r = std::get<ps::OpenAiRequest>(parsed);
  if (r.params.n < 1 || r.params.n > limits.max_n) bug("n escaped --max-n");
  if (limits.max_tokens_limit > 0 && r.params.max_tokens > limits.max_tokens_limit)
    bug("max_tokens escaped --max-tokens-limit");
  if (endpoint == ps::Endpoint::kChat && r.chat.messages.empty()) bug("chat without messages");
  if (endpoint == ps::Endpoint::kCompletion && r.prompts.empty()) bug("completion without prompt");

  // The handler fits max_tokens to the context before submitting; do the same, then the
  // engine's validation must agree with the HTTP layer's.
  ps::SamplingParams p = r.params;
  p.n = 1;
  if (ps::fit_to_context(endpoint, 10, kMaxModelLen, r.max_tokens_given, &p)) return 0;
  std::string param;
  if (!ps::validate(p, kVocab, &param).empty()) bug("accepted params fail validate()");
  return 0;
}
