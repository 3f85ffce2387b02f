#include "kvcache/state_snapshots.h"

#include <stdexcept>
#include <string>

namespace ps {

StateSnapshotStore::StateSnapshotStore(int32_t num_snapshots, int32_t interval_blocks)
    : interval_blocks_(interval_blocks) {
  if (num_snapshots < 0 || interval_blocks < 0) {
    throw std::invalid_argument("StateSnapshotStore: negative size");
  }
  state_.assign(size_t(num_snapshots), State::kFree);
  key_.assign(size_t(num_snapshots), 0);
  lru_pos_.resize(size_t(num_snapshots));
  for (int32_t s = num_snapshots - 1; s >= 0; --s) free_.push_back(s);
}

void StateSnapshotStore::fail(const std::string& what) const {
  throw std::logic_error("StateSnapshotStore: " + what);
}

int32_t StateSnapshotStore::num_pending() const {
  return num_snapshots() - num_held() - static_cast<int32_t>(free_.size());
}

int32_t StateSnapshotStore::reserve() {
  int32_t id = -1;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else if (!lru_.empty()) {
    id = lru_.front();  // held -> pending: evicted
    lru_.pop_front();
    by_key_.erase(key_[size_t(id)]);
  } else {
    return -1;
  }
  state_[size_t(id)] = State::kPending;
  return id;
}

void StateSnapshotStore::commit(int32_t id, uint64_t key) {
  if (id < 0 || id >= num_snapshots() || state_[size_t(id)] != State::kPending) {
    fail("commit(" + std::to_string(id) + ") of a snapshot that is not pending");
  }
  if (auto it = by_key_.find(key); it != by_key_.end()) {  // a newer state of the same prefix
    const int32_t old = it->second;
    lru_.erase(lru_pos_[size_t(old)]);
    state_[size_t(old)] = State::kFree;
    free_.push_back(old);
    by_key_.erase(it);
  }
  state_[size_t(id)] = State::kHeld;
  key_[size_t(id)] = key;
  lru_pos_[size_t(id)] = lru_.insert(lru_.end(), id);
  by_key_[key] = id;
}

void StateSnapshotStore::abandon(int32_t id) {
  if (id < 0 || id >= num_snapshots() || state_[size_t(id)] != State::kPending) {
    fail("abandon(" + std::to_string(id) + ") of a snapshot that is not pending");
  }
  state_[size_t(id)] = State::kFree;
  free_.push_back(id);
}

int32_t StateSnapshotStore::find(uint64_t key) {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return -1;
  const int32_t id = it->second;
  lru_.splice(lru_.end(), lru_, lru_pos_[size_t(id)]);  // most recently used
  return id;
}

void StateSnapshotStore::check_integrity() const {
  int32_t free = 0, held = 0;
  for (int32_t s = 0; s < num_snapshots(); ++s) {
    free += state_[size_t(s)] == State::kFree;
    if (state_[size_t(s)] != State::kHeld) continue;
    ++held;
    auto it = by_key_.find(key_[size_t(s)]);
    if (it == by_key_.end() || it->second != s) {
      fail("held snapshot " + std::to_string(s) + " is not indexed under its key");
    }
  }
  if (free != static_cast<int32_t>(free_.size())) fail("free list and states disagree");
  if (held != num_held() || held != static_cast<int32_t>(lru_.size())) {
    fail(std::to_string(held) + " held, " + std::to_string(by_key_.size()) + " indexed, " +
         std::to_string(lru_.size()) + " in the LRU order");
  }
  for (int32_t s : free_) {
    if (s < 0 || s >= num_snapshots() || state_[size_t(s)] != State::kFree) {
      fail("free list holds snapshot " + std::to_string(s) + ", which is not free");
    }
  }
}

}  // namespace ps
