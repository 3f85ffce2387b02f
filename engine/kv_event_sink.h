#pragma once
// Where the engine hands its KV-cache events (issue #39): one batch per engine step that changed
// the prefix cache, in step order, numbered from 0 without gaps. The engine thread calls
// publish(), so an implementation must return at once (queue, never block on a subscriber);
// kvevents/ has the ZMQ publisher in vLLM's wire format.
#include <cstdint>
#include <optional>
#include <vector>

namespace ps {

struct KvEvent {
  enum class Kind { kStored, kRemoved };
  Kind kind = Kind::kStored;
  std::vector<uint64_t> block_hashes;
  // kStored: the key of the block before the first (nullopt: a sequence's first block), the
  // blocks' tokens, and the LoRA adapter whose K/V they hold (nullopt: the base model).
  std::optional<uint64_t> parent_block_hash;
  std::vector<int32_t> token_ids;
  std::optional<int64_t> lora_id;
};

struct KvEventBatch {
  uint64_t seq = 0;  // 0, 1, 2, ...: the engine's count of batches
  double ts = 0;     // seconds since the Unix epoch, when the step ended
  int32_t block_size = 16;
  const char* medium = "CPU";  // where the blocks live: "CPU" or "GPU" (the executor's device)
  std::vector<KvEvent> events;
};

class KvEventSink {
 public:
  virtual ~KvEventSink() = default;
  virtual void publish(KvEventBatch batch) = 0;
  // Batches given up on before a subscriber could have them (a full queue): /metrics shows it.
  // Safe to call from any thread.
  virtual uint64_t dropped() const = 0;
};

}  // namespace ps
