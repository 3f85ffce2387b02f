#include "bench/plot.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace ps {

void plot_levels(const std::vector<LevelReport>& levels, const std::string& png_path) {
  namespace fs = std::filesystem;
  const fs::path data = fs::path(png_path).replace_extension(".dat");
  const fs::path script = fs::path(png_path).replace_extension(".gp");
  {
    std::ofstream d(data);
    if (!d) throw std::runtime_error("--plot " + png_path + ": cannot write " + data.string());
    d << "# concurrency output_tok_s ttft_p99_ms\n";
    for (const auto& l : levels) {
      d << l.concurrency << " " << l.output_throughput() << " " << l.ttft.p99 * 1e3 << "\n";
    }
  }
  {
    std::ofstream g(script);
    if (!g) throw std::runtime_error("--plot " + png_path + ": cannot write " + script.string());
    g << "set terminal pngcairo size 900,540 noenhanced\n"
      << "set output '" << png_path << "'\n"
      << "set title 'pagedserve bench serve'\n"
      << "set xlabel 'concurrent clients'\n"
      << "set logscale x 2\n"
      << "set ylabel 'output tokens/s'\n"
      << "set y2label 'p99 TTFT (ms)'\n"
      << "set ytics nomirror\nset y2tics\nset yrange [0:*]\nset y2range [0:*]\n"
      << "set key top left\nset grid\n"
      << "plot '" << data.string() << "' using 1:2 with linespoints lw 2 title 'output tok/s', \\\n"
      << "     '" << data.string()
      << "' using 1:3 axes x1y2 with linespoints lw 2 title 'p99 TTFT (ms)'\n";
  }
  const std::string cmd = "gnuplot '" + script.string() + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    throw std::runtime_error("--plot " + png_path + ": gnuplot failed on " + script.string() +
                             " (install gnuplot-nox; scripts/setup.sh does)");
  }
}

}  // namespace ps
