#include "engine/lora_registry.h"

#include "kernels/openmp_pool.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace ps {

LoraLease::LoraLease(std::shared_ptr<LoraRegistry> registry, std::string name, int32_t slot,
                     uint64_t identity, std::shared_ptr<const LoraAdapter> adapter)
    : registry_(std::move(registry)),
      name_(std::move(name)),
      slot_(slot),
      identity_(identity),
      adapter_(std::move(adapter)) {}

LoraLease::~LoraLease() {
  registry_->release(slot_);
}

LoraRegistry::LoraRegistry(int32_t max_loras)
    : max_loras_(max_loras), slots_(size_t(std::max(0, max_loras))) {
  if (max_loras < 0) throw std::invalid_argument("--max-loras must be >= 0");
}

std::optional<std::string> LoraRegistry::add(const std::string& name,
                                             std::shared_ptr<const LoraAdapter> adapter) {
  if (!adapter || !adapter->packed) throw std::invalid_argument("LoraRegistry::add: no adapter");
  // The caller (an HTTP thread, at runtime) just converted the factors, which may have started
  // an OpenMP pool on it: a second pool would cut the engine's workers' spin
  // (kernels/openmp_pool.h).
  release_this_threads_openmp_pool();
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<Entry>* free_slot = nullptr;
  int32_t draining = 0;
  for (auto& s : slots_) {
    if (!s) {
      if (free_slot == nullptr) free_slot = &s;
      continue;
    }
    if (s->draining) ++draining;
    if (!s->draining && s->info.name == name) {
      return "a LoRA adapter named '" + name + "' is already loaded; unload it first";
    }
  }
  if (free_slot == nullptr) {
    std::string msg = "all " + std::to_string(max_loras_) + " LoRA slots (--max-loras) are in use";
    if (draining > 0) {
      msg += " (" + std::to_string(draining) +
             " by unloaded adapters whose requests are still running)";
    }
    return msg + "; unload an adapter or start the server with a larger --max-loras";
  }
  Entry e;
  e.info.name = name;
  e.info.source = adapter->info.source;
  e.info.rank = adapter->info.rank;
  e.info.slot = int32_t(free_slot - slots_.data());
  e.info.created = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  e.identity = next_identity_++;
  e.adapter = std::move(adapter);
  *free_slot = std::move(e);
  return std::nullopt;
}

std::optional<int32_t> LoraRegistry::remove(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : slots_) {
    if (!s || s->draining || s->info.name != name) continue;
    const int32_t left = s->info.requests;
    if (left == 0) {
      s.reset();  // loaded -> free
    } else {
      s->draining = true;  // loaded -> draining
    }
    return left;
  }
  return std::nullopt;
}

std::shared_ptr<const LoraLease> LoraRegistry::acquire(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : slots_) {
    if (!s || s->draining || s->info.name != name) continue;
    ++s->info.requests;
    return std::shared_ptr<const LoraLease>(
        new LoraLease(shared_from_this(), name, s->info.slot, s->identity, s->adapter));
  }
  return nullptr;
}

void LoraRegistry::release(int32_t slot) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<Entry>& s = slots_.at(size_t(slot));
  if (!s || s->info.requests <= 0) {
    throw std::logic_error("LoraRegistry: release of slot " + std::to_string(slot) +
                           " that no lease holds");
  }
  if (--s->info.requests == 0 && s->draining) s.reset();  // draining -> free
}

bool LoraRegistry::contains(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::any_of(slots_.begin(), slots_.end(), [&](const std::optional<Entry>& s) {
    return s && !s->draining && s->info.name == name;
  });
}

std::vector<LoraEntryInfo> LoraRegistry::list() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<uint64_t, LoraEntryInfo>> loaded;
  for (const auto& s : slots_) {
    if (s && !s->draining) loaded.emplace_back(s->identity, s->info);
  }
  std::sort(loaded.begin(), loaded.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<LoraEntryInfo> out;
  for (auto& [id, info] : loaded) out.push_back(std::move(info));
  return out;
}

int32_t LoraRegistry::num_slots_held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return int32_t(std::count_if(slots_.begin(), slots_.end(),
                               [](const std::optional<Entry>& s) { return s.has_value(); }));
}

}  // namespace ps
