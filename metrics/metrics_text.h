#pragma once
// GET /metrics: the engine's counters in the Prometheus text exposition format (version 0.0.4).
#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "engine/engine_stats.h"

namespace ps {

// HTTP responses by status code, counted by the server itself so tests can assert that bad
// input never produced a 500. Index: status - 100; anything outside 100..599 counts as 500.
using HttpCounts = std::array<uint64_t, 500>;

class HttpCounters {
 public:
  void count(int status);
  HttpCounts snapshot() const;

 private:
  std::array<std::atomic<uint64_t>, 500> by_status_{};
};

// Codes with no responses are left out, except 500, which is always there (as 0 when all is well).
std::string metrics_text(const EngineStats& stats, const HttpCounts& http);

}  // namespace ps
