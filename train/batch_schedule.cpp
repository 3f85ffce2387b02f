#include "train/batch_schedule.h"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace ps {
namespace {

// Fisher-Yates with our own index draw: std::shuffle and the std distributions are
// implementation-defined, and the batches must not change with the standard library.
template <typename T>
void shuffle(std::vector<T>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

// Sorting this many batches' worth of examples by length keeps batches random across windows
// while most batches hold sequences of similar length.
constexpr int64_t kWindowBatches = 8;

}  // namespace

BatchSchedule::BatchSchedule(std::vector<int32_t> lengths, int32_t batch_size, uint64_t seed)
    : lengths_(std::move(lengths)), batch_size_(batch_size), seed_(seed) {
  if (lengths_.empty()) throw std::invalid_argument("BatchSchedule: no examples");
  if (batch_size_ < 1) throw std::invalid_argument("BatchSchedule: batch size must be >= 1");
}

int64_t BatchSchedule::batches_per_epoch() const {
  const int64_t n = static_cast<int64_t>(lengths_.size());
  return (n + batch_size_ - 1) / batch_size_;
}

const std::vector<int32_t>& BatchSchedule::batch(int64_t step) {
  if (step < 0) throw std::invalid_argument("BatchSchedule: negative step");
  const int64_t epoch = step / batches_per_epoch();
  if (epoch != epoch_) build_epoch(epoch);
  return batches_[static_cast<size_t>(step % batches_per_epoch())];
}

void BatchSchedule::build_epoch(int64_t epoch) {
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch) + 1);
  std::vector<int32_t> order(lengths_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  shuffle(order, rng);
  const size_t window = static_cast<size_t>(batch_size_ * kWindowBatches);
  for (size_t start = 0; start < order.size(); start += window) {
    const auto end =
        order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + window));
    std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(start), end,
                     [&](int32_t a, int32_t b) { return lengths_[a] < lengths_[b]; });
  }
  batches_.clear();
  for (size_t start = 0; start < order.size(); start += static_cast<size_t>(batch_size_)) {
    const size_t end = std::min(order.size(), start + static_cast<size_t>(batch_size_));
    batches_.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(start),
                          order.begin() + static_cast<std::ptrdiff_t>(end));
  }
  shuffle(batches_, rng);
  epoch_ = epoch;
}

}  // namespace ps
