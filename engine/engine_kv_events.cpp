// The engine's side of KV-cache events (issue #39, docs/architecture.md §4): the block manager's
// recorded events handed out as one numbered batch per step, and the prefix-cache snapshot that
// GET /debug/kv-cache/blocks compares them with. Split from engine_core.cpp.
#include <chrono>
#include <future>

#include "engine/engine_core.h"

namespace ps {

void EngineCore::publish_kv_events() {
  if (!config_.kv_events) return;
  std::vector<BlockEvent> recorded = scheduler_->take_block_events();
  if (recorded.empty()) return;
  KvEventBatch batch;
  batch.seq = static_cast<uint64_t>(next_event_seq_++);
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.kv_events_batches_total = static_cast<uint64_t>(next_event_seq_);
  }
  batch.ts =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  batch.block_size = config_.block_size;
  batch.medium = kv_medium_;
  batch.events.reserve(recorded.size());
  for (BlockEvent& e : recorded) {
    KvEvent out;
    if (auto* s = std::get_if<BlockStored>(&e)) {
      out.kind = KvEvent::Kind::kStored;
      out.block_hashes = std::move(s->hashes);
      out.parent_block_hash = s->parent;
      out.token_ids = std::move(s->token_ids);
      if (s->root != kRootBlockKey) out.lora_id = lora_of_root_.at(s->root);
    } else {
      out.kind = KvEvent::Kind::kRemoved;
      out.block_hashes = {std::get<BlockRemoved>(e).hash};
    }
    batch.events.push_back(std::move(out));
  }
  config_.kv_events->publish(std::move(batch));
}

std::optional<Engine::CacheSnapshot> EngineCore::cache_snapshot(std::chrono::milliseconds timeout) {
  auto reply = std::make_shared<std::promise<Engine::CacheSnapshot>>();
  std::future<Engine::CacheSnapshot> answer = reply->get_future();
  inbox_.enqueue(SnapshotCommand{reply});
  if (answer.wait_for(timeout) != std::future_status::ready) return std::nullopt;
  try {
    return answer.get();
  } catch (const std::future_error&) {
    return std::nullopt;  // the engine stopped with the command unread (a broken promise)
  }
}

}  // namespace ps
