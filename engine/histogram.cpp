#include "engine/histogram.h"

#include <algorithm>

namespace ps {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size(), 0) {}

void Histogram::observe(double seconds) {
  auto it = std::lower_bound(bounds_.begin(), bounds_.end(), seconds);
  if (it != bounds_.end()) ++counts_[it - bounds_.begin()];
  ++count_;
  sum_ += seconds;
}

HistogramSnapshot Histogram::snapshot() const {
  HistogramSnapshot s;
  s.bounds = bounds_;
  s.counts.resize(counts_.size());
  uint64_t running = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    running += counts_[i];
    s.counts[i] = running;
  }
  s.count = count_;
  s.sum = sum_;
  return s;
}

std::vector<double> Histogram::latency_buckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,
          0.5,   0.75,   1.0,   2.5,  5.0,  7.5,  10.0, 20.0, 40.0, 60.0};
}

}  // namespace ps
