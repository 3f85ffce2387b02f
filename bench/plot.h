#pragma once
// Draws `bench serve` results with gnuplot (Debian's gnuplot-nox), run as a child process.
#include <string>
#include <vector>

#include "bench/serve_bench.h"

namespace ps {

// Output token throughput (left axis) and p99 TTFT (right axis) against concurrency, as a PNG.
// Throws std::runtime_error naming the file or gnuplot when drawing fails.
void plot_levels(const std::vector<LevelReport>& levels, const std::string& png_path);

}  // namespace ps
