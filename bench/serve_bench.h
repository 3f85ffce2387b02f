#pragma once
// `pagedserve bench serve`: an HTTP load generator. Sends a Workload to a running server as
// streamed /v1/completions requests, timing every chunk, and summarizes each concurrency level
// in the metrics users expect (vLLM's vocabulary: TTFT, TPOT, ITL, E2E, throughputs).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/latency_stats.h"
#include "bench/workload.h"

namespace ps {

enum class Arrival { kBurst, kFixedRate, kPoisson };

struct ServeBenchOptions {
  std::string url = "http://127.0.0.1:8000";
  std::string model;  // empty: the server's only model
  // --lora-mix: request i asks for model_mix[i % size] (adapters, or the base by its name).
  std::vector<std::string> model_mix;
  std::string api_key;
  Arrival arrival = Arrival::kBurst;
  double rate = 0;              // requests per second, for kFixedRate and kPoisson
  double max_duration_s = 600;  // no request is sent after this long into a level
  double request_timeout_s = 300;
  uint64_t seed = 0;     // Poisson arrivals
  bool progress = true;  // a progress bar on stderr
};

struct LevelReport {
  int32_t concurrency = 0;  // the most requests in flight at once
  size_t planned = 0, completed = 0, failed = 0, not_sent = 0;
  size_t length_mismatches = 0;  // completed with completion_tokens != the requested count
  double duration_s = 0;         // first send -> last response
  int64_t prompt_tokens = 0, output_tokens = 0, cached_tokens = 0;
  int64_t expected_output_tokens = 0;   // requested, over completed requests
  LatencySummary ttft, tpot, itl, e2e;  // seconds
  std::vector<std::string> errors;      // the first few failures, for the report
  double request_throughput() const { return duration_s > 0 ? completed / duration_s : 0; }
  double output_throughput() const { return duration_s > 0 ? output_tokens / duration_s : 0; }
  double total_throughput() const {
    return duration_s > 0 ? (prompt_tokens + output_tokens) / duration_s : 0;
  }
};

// Checks the server is up (/health; waits up to 60 s while it answers 503, loading) and
// answers one short request; throws with the URL and the error otherwise.
void check_server(const ServeBenchOptions& opts);

// Runs one level: at most `concurrency` requests in flight (0: no limit), arrivals per opts.
LevelReport run_serve_level(const ServeBenchOptions& opts, const Workload& w, int32_t concurrency);

nlohmann::json to_json(const LevelReport& r);
void print_level_header();
void print_level(const LevelReport& r);  // one row per level, then any errors

}  // namespace ps
