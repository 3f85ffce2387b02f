#include "train/progress.h"

#include <chrono>
#include <cstdio>

namespace ps {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string hms(double seconds) {
  const auto s = static_cast<int64_t>(seconds);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}

}  // namespace

ProgressLine::ProgressLine(int64_t total_steps, int64_t first_step)
    : total_(total_steps), first_(first_step), start_seconds_(now_seconds()) {}

void ProgressLine::add(const StepStats& s) {
  last_ = s;
  // ~50-step window: single batches differ a lot (arithmetic vs long explanations).
  avg_loss_ = avg_loss_ < 0 ? s.loss : 0.98 * avg_loss_ + 0.02 * s.loss;
}

std::string ProgressLine::line() const {
  constexpr int kWidth = 24;
  const double frac =
      total_ > 0 ? static_cast<double>(last_.step) / static_cast<double>(total_) : 1;
  std::string bar(kWidth, '.');
  for (int i = 0; i < static_cast<int>(frac * kWidth); ++i) bar[static_cast<size_t>(i)] = '#';
  const double elapsed = now_seconds() - start_seconds_;
  const int64_t done = last_.step - first_;
  const double per_step = done > 0 ? elapsed / static_cast<double>(done) : 0;
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "step %6lld/%lld [%s] %3.0f%% loss %.4f avg %.4f lr %.2e |g| %.2f %.2f s/step "
                "elapsed %s eta %s",
                static_cast<long long>(last_.step), static_cast<long long>(total_), bar.c_str(),
                frac * 100, last_.loss, avg_loss_, last_.lr, last_.grad_norm, per_step,
                hms(elapsed).c_str(),
                hms(per_step * static_cast<double>(total_ - last_.step)).c_str());
  return buf;
}

}  // namespace ps
