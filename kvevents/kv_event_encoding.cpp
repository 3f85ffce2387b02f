#include "kvevents/kv_event_encoding.h"

#include <msgpack.hpp>

namespace ps {

std::string encode_kv_event_batch(const KvEventBatch& batch) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  const std::string medium = batch.medium;
  pk.pack_array(2);
  pk.pack_double(batch.ts);
  pk.pack_array(static_cast<uint32_t>(batch.events.size()));
  for (const KvEvent& e : batch.events) {
    if (e.kind == KvEvent::Kind::kStored) {
      pk.pack_array(7);
      pk.pack(std::string("BlockStored"));
      pk.pack(e.block_hashes);
      if (e.parent_block_hash) {
        pk.pack_uint64(*e.parent_block_hash);
      } else {
        pk.pack_nil();
      }
      pk.pack(e.token_ids);
      pk.pack_int32(batch.block_size);
      if (e.lora_id) {
        pk.pack_int64(*e.lora_id);
      } else {
        pk.pack_nil();
      }
      pk.pack(medium);
    } else {
      pk.pack_array(3);
      pk.pack(std::string("BlockRemoved"));
      pk.pack(e.block_hashes);
      pk.pack(medium);
    }
  }
  return std::string(buf.data(), buf.size());
}

}  // namespace ps
