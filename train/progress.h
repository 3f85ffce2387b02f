#pragma once
// The one-line training progress report: a bar, the loss (last step and a moving average), the
// learning rate, gradient norm, speed and time left.
#include <cstdint>
#include <string>

#include "train/trainer.h"

namespace ps {

class ProgressLine {
 public:
  // `first_step`: steps already done (a resumed run), so the speed counts only this run's steps.
  ProgressLine(int64_t total_steps, int64_t first_step);
  void add(const StepStats& s);
  std::string line() const;

 private:
  int64_t total_;
  int64_t first_;
  StepStats last_;
  double avg_loss_ = -1;  // exponential moving average; < 0 before the first step
  double start_seconds_;
};

}  // namespace ps
