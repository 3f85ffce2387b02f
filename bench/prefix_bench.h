#pragma once
// `pagedserve bench prefix`: what prefix sharing buys. Many requests share one long system
// prompt; TTFT is measured one request at a time, first on prompts of the same shape whose
// prefixes all differ (cold: nothing to reuse), then on prompts sharing the prefix (warm).
// The server's /metrics counters give the prefix-cache hit rate of the warm phase. Against a
// server started with --no-prefix-caching both phases should be alike.
#include <cstdint>
#include <nlohmann/json.hpp>

#include "bench/serve_bench.h"

namespace ps {

struct PrefixBenchOptions {
  int32_t num_prompts = 16;
  int32_t prefix_len = 1024;
  int32_t suffix_len = 32;
  int32_t output_len = 16;
  int32_t vocab_size = 6400;
  uint64_t seed = 0;
};

struct PrefixReport {
  LevelReport cold, warm;
  bool metrics_found = false;              // the server exposes pagedserve_prefix_cache_* counters
  double warm_queries = 0, warm_hits = 0;  // prompt tokens looked up / found, warm phase
  double hit_rate() const { return warm_queries > 0 ? warm_hits / warm_queries : 0; }
  double ttft_speedup() const { return warm.ttft.p50 > 0 ? cold.ttft.p50 / warm.ttft.p50 : 0; }
};

PrefixReport run_prefix_bench(const ServeBenchOptions& opts, const PrefixBenchOptions& p);
nlohmann::json to_json(const PrefixReport& r);
void print_prefix_report(const PrefixReport& r);

}  // namespace ps
