#pragma once
// One KvEventBatch as vLLM's subscribers decode it (vllm.distributed.kv_events: msgspec structs
// with array_like=True, events tagged by class name), in msgpack:
//   batch:        [ts (float64), [event, ...]]
//   BlockStored:  ["BlockStored", [hash, ...], parent_hash | nil, [token_id, ...], block_size,
//                  lora_id | nil, medium]
//   BlockRemoved: ["BlockRemoved", [hash, ...], medium]
// Hashes are unsigned 64-bit integers (vLLM's ExternalBlockHash is bytes | int). The batch's
// seq travels in its own frame (kv_event_publisher.h), not in the payload.
#include <string>

#include "engine/kv_event_sink.h"

namespace ps {

std::string encode_kv_event_batch(const KvEventBatch& batch);

}  // namespace ps
