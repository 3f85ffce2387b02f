#pragma once
// Mean and percentiles of a list of latencies, in the units they came in.
#include <cstddef>
#include <vector>

namespace ps {

struct LatencySummary {
  size_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// Percentiles by linear interpolation between closest ranks (numpy's default), so p50 of
// {1, 2} is 1.5. An empty list gives all zeros with count 0.
LatencySummary summarize(std::vector<double> values);

}  // namespace ps
