#pragma once
// The clock every benchmark times with, and the one conversion they all need.
#include <chrono>

namespace ps {

using BenchClock = std::chrono::steady_clock;

inline double secs(BenchClock::time_point a, BenchClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace ps
