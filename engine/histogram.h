#pragma once
#include <vector>

#include "engine/engine_stats.h"

namespace ps {

// Fixed-bucket latency histogram (seconds), Prometheus-style cumulative on snapshot.
// Not thread-safe: the engine thread records, and stats() copies under the engine's stats lock.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double seconds);
  HistogramSnapshot snapshot() const;

  static std::vector<double> latency_buckets();  // 1 ms .. 60 s

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative
  uint64_t count_ = 0;
  double sum_ = 0.0;
};

}  // namespace ps
