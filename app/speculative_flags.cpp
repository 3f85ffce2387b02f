#include "app/speculative_flags.h"

namespace ps {

std::set<std::string> speculative_flag_names() {
  return {"speculative", "num-speculative-tokens", "ngram-max", "ngram-min",
          "speculative-disable-by-batch-size"};
}

namespace {

int32_t int_in(const Flags& flags, const std::string& name, int64_t fallback, int64_t lo,
               int64_t hi) {
  const int64_t v = flags.i64(name, fallback);
  if (v < lo || v > hi) {
    throw UsageError("flag --" + name + " must be between " + std::to_string(lo) + " and " +
                     std::to_string(hi) + ", got " + std::to_string(v));
  }
  return static_cast<int32_t>(v);
}

}  // namespace

SpeculativeConfig speculative_config_from_flags(const Flags& flags) {
  SpeculativeConfig c;
  const std::string method = flags.str("speculative", "off");
  if (method == "off") {
    for (const std::string& name : speculative_flag_names()) {
      if (name != "speculative" && flags.has(name)) {
        throw UsageError("flag --" + name + " needs --speculative ngram");
      }
    }
    return c;
  }
  if (method != "ngram") {
    throw UsageError("flag --speculative: unknown method '" + method +
                     "' (ngram: draft by prompt lookup; off)");
  }
  c.num_speculative_tokens = int_in(flags, "num-speculative-tokens", 4, 1, 64);
  c.ngram_max = int_in(flags, "ngram-max", c.ngram_max, 1, 64);
  c.ngram_min = int_in(flags, "ngram-min", c.ngram_min, 1, 64);
  if (c.ngram_min > c.ngram_max) {
    throw UsageError("flag --ngram-min (" + std::to_string(c.ngram_min) +
                     ") must not exceed --ngram-max (" + std::to_string(c.ngram_max) + ")");
  }
  c.disable_by_batch_size =
      int_in(flags, "speculative-disable-by-batch-size", c.disable_by_batch_size, 0, 1 << 20);
  return c;
}

}  // namespace ps
