#include "sampling/sampling_params.h"

#include <cmath>
#include <sstream>

#include "sampling/utf8.h"

namespace ps {
namespace {

// Formats a number the way a client wrote it ("0.5", not "0.500000"); NaN/Inf spelled out.
template <typename T>
std::string show(T v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Each check returns false after filling the error, so validate() reads as a list of rules.
struct Checker {
  std::string message;
  std::string field;

  bool fail(const std::string& name, const std::string& msg) {
    field = name;
    message = msg;
    return false;
  }

  // Closed or half-open float range; NaN/Inf always fail because no range admits them.
  bool in_range(const char* name, float v, float lo, float hi, bool lo_open, const char* range) {
    bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
    if (ok) return true;
    return fail(name,
                std::string(name) + " must be a finite number in " + range + ", got " + show(v));
  }

  bool token_id(const char* name, int32_t id, int32_t vocab) {
    if (id >= 0 && id < vocab) return true;
    return fail(name, std::string(name) + " contains token id " + show(id) +
                          ", which is outside the vocabulary [0, " + show(vocab) + ")");
  }
};

bool check_all(const SamplingParams& p, int32_t vocab, Checker& c) {
  if (!c.in_range("temperature", p.temperature, 0.0f, 100.0f, false, "[0, 100]")) return false;
  if (!c.in_range("top_p", p.top_p, 0.0f, 1.0f, true, "(0, 1]")) return false;
  if (p.top_k < -1) {
    return c.fail("top_k",
                  "top_k must be -1 or 0 (off) or a positive integer, got " + show(p.top_k));
  }
  if (!c.in_range("min_p", p.min_p, 0.0f, 1.0f, false, "[0, 1]")) return false;
  if (!c.in_range("presence_penalty", p.presence_penalty, -2.0f, 2.0f, false, "[-2, 2]")) {
    return false;
  }
  if (!c.in_range("frequency_penalty", p.frequency_penalty, -2.0f, 2.0f, false, "[-2, 2]")) {
    return false;
  }
  if (!c.in_range("repetition_penalty", p.repetition_penalty, 0.0f, 2.0f, true, "(0, 2]")) {
    return false;
  }
  // 0 scores the prompt (prompt_logprobs) and generates nothing.
  if (p.max_tokens < 0) {
    return c.fail("max_tokens", "max_tokens must be at least 0, got " + show(p.max_tokens));
  }
  if (p.min_tokens < 0 || p.min_tokens > p.max_tokens) {
    return c.fail("min_tokens", "min_tokens must be in [0, max_tokens] = [0, " +
                                    show(p.max_tokens) + "], got " + show(p.min_tokens));
  }
  if (p.n < 1 || p.n > 16) {
    return c.fail("n", "n must be in [1, 16], got " + show(p.n));
  }
  if (p.logprobs < -1 || p.logprobs > 20) {
    return c.fail("logprobs", "logprobs must be in [0, 20] (or absent), got " + show(p.logprobs));
  }
  if (p.prompt_logprobs < -1 || p.prompt_logprobs > 20) {
    return c.fail("prompt_logprobs",
                  "prompt_logprobs must be in [0, 20] (or absent), got " + show(p.prompt_logprobs));
  }
  if (p.stop.size() > 16) {
    return c.fail("stop", "stop may hold at most 16 strings, got " + show(p.stop.size()));
  }
  for (const auto& s : p.stop) {
    if (s.empty()) return c.fail("stop", "stop strings must not be empty");
    // JSON strings are UTF-8; a C++ caller could pass raw bytes that match mid-character.
    if (!is_valid_utf8(s)) return c.fail("stop", "stop strings must be valid UTF-8");
  }
  for (int32_t id : p.stop_token_ids) {
    if (!c.token_id("stop_token_ids", id, vocab)) return false;
  }
  for (const auto& [id, bias] : p.logit_bias) {
    if (!c.token_id("logit_bias", id, vocab)) return false;
    if (!std::isfinite(bias) || bias < -100.0f || bias > 100.0f) {
      return c.fail("logit_bias", "logit_bias values must be finite numbers in [-100, 100], got " +
                                      show(bias) + " for token " + show(id));
    }
  }
  return true;
}

}  // namespace

std::string validate(const SamplingParams& p, int32_t vocab_size, std::string* param) {
  Checker c;
  if (check_all(p, vocab_size, c)) return {};
  if (param != nullptr) *param = c.field;
  return c.message;
}

}  // namespace ps
