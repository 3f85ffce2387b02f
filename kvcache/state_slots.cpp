#include "kvcache/state_slots.h"

#include <stdexcept>
#include <string>

namespace ps {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::logic_error("StateSlotPool: " + what);
}

}  // namespace

StateSlotPool::StateSlotPool(int32_t num_slots) {
  if (num_slots < 0) throw std::invalid_argument("StateSlotPool: negative size");
  owner_.assign(size_t(num_slots), -1);
  // Reversed so that slot 0 is handed out first: plans are easier to read in tests.
  for (int32_t s = num_slots - 1; s >= 0; --s) free_.push_back(s);
}

int32_t StateSlotPool::acquire(int64_t seq) {
  if (slot_of_.count(seq)) fail("sequence " + std::to_string(seq) + " already holds a slot");
  if (free_.empty()) fail("acquire(): no free slot; callers must check num_free()");
  const int32_t slot = free_.back();
  free_.pop_back();
  owner_[size_t(slot)] = seq;
  slot_of_[seq] = slot;
  return slot;
}

void StateSlotPool::release(int64_t seq) {
  auto it = slot_of_.find(seq);
  if (it == slot_of_.end()) return;
  owner_[size_t(it->second)] = -1;
  free_.push_back(it->second);
  slot_of_.erase(it);
}

int32_t StateSlotPool::slot_of(int64_t seq) const {
  auto it = slot_of_.find(seq);
  return it == slot_of_.end() ? -1 : it->second;
}

void StateSlotPool::check_integrity() const {
  std::vector<uint8_t> listed(owner_.size(), 0);
  for (int32_t s : free_) {
    if (s < 0 || s >= num_slots()) fail("free list holds out-of-range slot " + std::to_string(s));
    if (listed[size_t(s)]++) fail("slot " + std::to_string(s) + " is on the free list twice");
    if (owner_[size_t(s)] != -1) fail("slot " + std::to_string(s) + " is free but owned");
  }
  for (const auto& [seq, slot] : slot_of_) {
    if (slot < 0 || slot >= num_slots() || owner_[size_t(slot)] != seq) {
      fail("sequence " + std::to_string(seq) + "'s slot is not owned by it");
    }
  }
  if (slot_of_.size() + free_.size() != owner_.size()) {
    fail(std::to_string(slot_of_.size()) + " in use + " + std::to_string(free_.size()) +
         " free != " + std::to_string(owner_.size()) + " slots");
  }
}

}  // namespace ps
