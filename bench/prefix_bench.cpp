#include "bench/prefix_bench.h"

#include <cstdio>
#include <optional>

#include "bench/sse_client.h"

namespace ps {
namespace {

struct PrefixCounters {
  double queries = 0, hits = 0;
};

std::optional<PrefixCounters> read_counters(CompletionClient& client) {
  std::string error;
  auto text = client.get("/metrics", &error);
  if (!text) return std::nullopt;
  auto q = prometheus_value(*text, "pagedserve_prefix_cache_queries_total");
  auto h = prometheus_value(*text, "pagedserve_prefix_cache_hits_total");
  if (!q || !h) return std::nullopt;
  return PrefixCounters{*q, *h};
}

}  // namespace

PrefixReport run_prefix_bench(const ServeBenchOptions& opts, const PrefixBenchOptions& p) {
  // Different seeds: the cold prompts must not share the warm phase's prefix.
  const Workload cold = prefix_workload(p.num_prompts, p.prefix_len, p.suffix_len, p.output_len,
                                        p.vocab_size, p.seed + 1, /*shared_prefix=*/false);
  const Workload warm = prefix_workload(p.num_prompts + 1, p.prefix_len, p.suffix_len, p.output_len,
                                        p.vocab_size, p.seed, /*shared_prefix=*/true);
  PrefixReport r;
  ServeBenchOptions one = opts;
  one.arrival = Arrival::kBurst;
  r.cold = run_serve_level(one, cold, 1);

  // The first shared-prefix request fills the cache; it is not part of the warm figures.
  CompletionClient client(opts.url, opts.request_timeout_s, opts.api_key);
  RequestRecord prime = client.stream_completion(warm.prompts[0], warm.output_lens[0], opts.model);
  if (!prime.ok)
    throw std::runtime_error("--url " + opts.url + ": priming request: " + prime.error);
  Workload rest;
  rest.prompts.assign(warm.prompts.begin() + 1, warm.prompts.end());
  rest.output_lens.assign(warm.output_lens.begin() + 1, warm.output_lens.end());

  auto before = read_counters(client);
  r.warm = run_serve_level(one, rest, 1);
  auto after = read_counters(client);
  if (before && after) {
    r.metrics_found = true;
    r.warm_queries = after->queries - before->queries;
    r.warm_hits = after->hits - before->hits;
  }
  return r;
}

nlohmann::json to_json(const PrefixReport& r) {
  nlohmann::json j = {{"cold", to_json(r.cold)},
                      {"warm", to_json(r.warm)},
                      {"ttft_p50_cold_over_warm", r.ttft_speedup()},
                      {"metrics_found", r.metrics_found}};
  if (r.metrics_found) {
    j["warm_prefix_cache_queries"] = r.warm_queries;
    j["warm_prefix_cache_hits"] = r.warm_hits;
    j["warm_prefix_cache_hit_rate"] = r.hit_rate();
  }
  return j;
}

void print_prefix_report(const PrefixReport& r) {
  auto row = [](const char* name, const LevelReport& l) {
    const double cached =
        l.prompt_tokens > 0 ? 100.0 * static_cast<double>(l.cached_tokens) / l.prompt_tokens : 0;
    std::printf(
        "%-5s %3zu req  TTFT mean %8.1f ms  p50 %8.1f ms  p99 %8.1f ms  "
        "cached prompt tokens %5.1f%%  failed %zu\n",
        name, l.completed, l.ttft.mean * 1e3, l.ttft.p50 * 1e3, l.ttft.p99 * 1e3, cached, l.failed);
  };
  row("cold", r.cold);
  row("warm", r.warm);
  std::printf("warm TTFT is %.2fx lower than cold (p50)\n", r.ttft_speedup());
  if (r.metrics_found) {
    std::printf(
        "prefix-cache hit rate during the warm phase (/metrics): %.1f%% (%.0f of %.0f "
        "prompt tokens)\n",
        100.0 * r.hit_rate(), r.warm_hits, r.warm_queries);
  } else {
    std::printf(
        "prefix-cache hit rate: the server's /metrics has no "
        "pagedserve_prefix_cache_* counters\n");
  }
  for (const auto& e : r.cold.errors) std::printf("      cold error: %s\n", e.c_str());
  for (const auto& e : r.warm.errors) std::printf("      warm error: %s\n", e.c_str());
}

}  // namespace ps
