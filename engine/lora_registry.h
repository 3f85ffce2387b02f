#pragma once
// The LoRA adapters an engine serves, by name (issue #22). Thread-safe: HTTP handlers resolve a
// request's `model` to an adapter and load or unload adapters while the engine thread runs.
//
// Each adapter holds one of --max-loras runner slots from load until it is unloaded AND the last
// request using it has ended: unloading only hides the name, so requests in flight finish with
// the adapter they started with, and no new adapter can take the slot under them.
//
//   add --> loaded --remove--> draining (name gone, leases left) --last lease ends--> slot free
//           loaded --remove, no leases--> slot free
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "model/lora_adapter.h"

namespace ps {

class LoraRegistry;

// One request's hold on an adapter. The request carries it to the engine; destroying it (when
// the request's state goes away, whatever the ending) releases the adapter.
class LoraLease {
 public:
  ~LoraLease();
  LoraLease(const LoraLease&) = delete;
  LoraLease& operator=(const LoraLease&) = delete;

  const std::string& name() const { return name_; }
  int32_t slot() const { return slot_; }
  // Unique per load, never reused: what the prefix cache's chain starts from.
  uint64_t identity() const { return identity_; }
  const std::shared_ptr<const LoraAdapter>& adapter() const { return adapter_; }

 private:
  friend class LoraRegistry;
  LoraLease(std::shared_ptr<LoraRegistry> registry, std::string name, int32_t slot,
            uint64_t identity, std::shared_ptr<const LoraAdapter> adapter);

  std::shared_ptr<LoraRegistry> registry_;
  std::string name_;
  int32_t slot_;
  uint64_t identity_;
  std::shared_ptr<const LoraAdapter> adapter_;
};

struct LoraEntryInfo {
  std::string name;
  std::string source;
  int32_t rank = 0;
  int32_t slot = 0;
  int64_t created = 0;   // unix seconds at load
  int32_t requests = 0;  // requests holding it now
};

class LoraRegistry : public std::enable_shared_from_this<LoraRegistry> {
 public:
  explicit LoraRegistry(int32_t max_loras);

  int32_t max_loras() const { return max_loras_; }

  // Loads `adapter` under `name` into a free slot. Returns an error message (nullopt: done) when
  // the name is taken or every slot is held (adapters still draining count).
  std::optional<std::string> add(const std::string& name,
                                 std::shared_ptr<const LoraAdapter> adapter);
  // Hides `name` from new requests; its slot frees when its last request ends. Returns the
  // number of requests still using it, or nullopt for a name that is not loaded.
  std::optional<int32_t> remove(const std::string& name);
  // A lease for one request on the adapter loaded as `name`; null when there is none.
  std::shared_ptr<const LoraLease> acquire(const std::string& name);

  bool contains(const std::string& name) const;
  std::vector<LoraEntryInfo> list() const;  // loaded adapters (not draining), in load order
  int32_t num_slots_held() const;           // loaded + draining

 private:
  friend class LoraLease;
  void release(int32_t slot);

  struct Entry {
    LoraEntryInfo info;
    uint64_t identity = 0;
    std::shared_ptr<const LoraAdapter> adapter;
    bool draining = false;
  };

  const int32_t max_loras_;
  mutable std::mutex mu_;
  std::vector<std::optional<Entry>> slots_;  // max_loras entries
  uint64_t next_identity_ = 1;
};

}  // namespace ps
