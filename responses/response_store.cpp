#include "responses/response_store.h"

namespace ps::responses {

ResponseStore::ResponseStore(size_t capacity, std::chrono::seconds ttl, Clock clock)
    : capacity_(capacity), ttl_(ttl), clock_(std::move(clock)) {
  if (!clock_) clock_ = [] { return std::chrono::steady_clock::now(); };
}

// Entries are stored in the order they expire (one ttl for all, a replaced one moves to the
// back), so the expired ones are a prefix of `order_`.
void ResponseStore::drop_expired_locked(std::chrono::steady_clock::time_point now) {
  while (!order_.empty()) {
    auto it = entries_.find(order_.front());
    if (it->second.expires > now) return;
    entries_.erase(it);
    order_.pop_front();
  }
}

bool ResponseStore::put(const std::string& id, StoredResponse stored) {
  if (capacity_ == 0) return false;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = clock_();
  drop_expired_locked(now);
  if (auto it = entries_.find(id); it != entries_.end()) {
    order_.erase(it->second.order);
    entries_.erase(it);
  }
  while (entries_.size() >= capacity_) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
  order_.push_back(id);
  entries_.emplace(id, Entry{std::move(stored), now + ttl_, std::prev(order_.end())});
  return true;
}

std::optional<StoredResponse> ResponseStore::get(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  drop_expired_locked(clock_());
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.stored;
}

bool ResponseStore::erase(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  order_.erase(it->second.order);
  entries_.erase(it);
  return true;
}

size_t ResponseStore::size() {
  std::lock_guard<std::mutex> lock(mu_);
  drop_expired_locked(clock_());
  return entries_.size();
}

}  // namespace ps::responses
