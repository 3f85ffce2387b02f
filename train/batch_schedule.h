#pragma once
// Which examples form the batch of each training step. A pure function of (lengths, batch size,
// seed, step), so a run resumed from a checkpoint sees exactly the batches it would have seen.
#include <cstdint>
#include <vector>

namespace ps {

class BatchSchedule {
 public:
  // lengths: token count of each example (batches group similar lengths to cut padding).
  BatchSchedule(std::vector<int32_t> lengths, int32_t batch_size, uint64_t seed);

  // Example indices of step `step` (0-based). Every epoch visits each example once, in an order
  // drawn from (seed, epoch); batches hold examples of similar length, in a shuffled order.
  const std::vector<int32_t>& batch(int64_t step);
  int64_t batches_per_epoch() const;

 private:
  void build_epoch(int64_t epoch);

  std::vector<int32_t> lengths_;
  int32_t batch_size_;
  uint64_t seed_;
  int64_t epoch_ = -1;  // the epoch whose batches are in batches_
  std::vector<std::vector<int32_t>> batches_;
};

}  // namespace ps
