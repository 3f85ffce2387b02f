#pragma once
// The bounded in-memory store behind `store: true`, `previous_response_id` and
// GET /v1/responses/{id}: each stored response keeps its response object and the conversation
// it ended (the chat messages a follow-up continues from; instructions excluded). At most
// `capacity` responses, each for at most `ttl`: the oldest goes first when full, and an expired
// one is gone when next looked at. Shared by the handler threads, so every call locks.
#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace ps::responses {

struct StoredResponse {
  nlohmann::json response;
  nlohmann::ordered_json conversation;
};

class ResponseStore {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // capacity 0 stores nothing (put refuses). `clock` is for tests; steady_clock by default.
  ResponseStore(size_t capacity, std::chrono::seconds ttl, Clock clock = {});

  // Stores (or replaces) `id`; evicts the oldest when full. False when capacity is 0.
  bool put(const std::string& id, StoredResponse stored);
  // The stored response, or nullopt when it was never stored, has expired or was evicted.
  std::optional<StoredResponse> get(const std::string& id);
  // True when `id` was there (and is now gone).
  bool erase(const std::string& id);
  size_t size();

  size_t capacity() const { return capacity_; }
  std::chrono::seconds ttl() const { return ttl_; }

 private:
  struct Entry {
    StoredResponse stored;
    std::chrono::steady_clock::time_point expires;
    std::list<std::string>::iterator order;
  };
  void drop_expired_locked(std::chrono::steady_clock::time_point now);

  const size_t capacity_;
  const std::chrono::seconds ttl_;
  Clock clock_;
  std::mutex mu_;
  std::list<std::string> order_;  // oldest first; expiry follows this order (one ttl for all)
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace ps::responses
