// What the engine thread publishes after each step for other threads to read (EngineStats,
// engine_stats.h): the scheduler's and block pools' counts, integrity, latency histograms.
#include <algorithm>

#include "engine/engine_core.h"

namespace ps {

void EngineCore::publish_stats() {
  const KvPools& pools = scheduler_->kv_pools();
  const BlockManager& bm = pools.full();
  bool integrity_ok = true;
  if (config_.check_integrity_every_step) {
    try {
      // The pools, the sequences' tables and the state slots (in use + free = pool, one per
      // running sequence) and snapshots.
      scheduler_->check_integrity();
    } catch (const std::exception&) {
      integrity_ok = false;
    }
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.running = scheduler_->num_running();
  stats_.waiting = scheduler_->num_waiting();
  stats_.kv_blocks_total = bm.num_blocks();
  stats_.kv_blocks_active = bm.num_active_blocks();
  stats_.kv_blocks_cached = bm.num_cached_blocks();
  stats_.kv_blocks_free = bm.num_free_blocks();
  stats_.state_slots_total = scheduler_->state_slots().num_slots();
  stats_.state_slots_in_use = scheduler_->state_slots().num_in_use();
  stats_.state_snapshots_total = scheduler_->state_snapshots().num_snapshots();
  stats_.state_snapshots_held = scheduler_->state_snapshots().num_held();
  const int64_t layers = model_.config.num_hidden_layers;
  if (const BlockManager* sp = pools.sliding()) {
    stats_.kv_sliding_blocks_total = sp->num_blocks();
    stats_.kv_sliding_blocks_active = sp->num_active_blocks();
    stats_.kv_sliding_blocks_cached = sp->num_cached_blocks();
    stats_.kv_sliding_blocks_free = sp->num_free_blocks();
    stats_.kv_layer_blocks_held_sum +=
        uint64_t(bm.num_active_blocks()) * (layers - sliding_layers_) +
        uint64_t(sp->num_active_blocks()) * sliding_layers_;
  } else {
    stats_.kv_layer_blocks_held_sum += uint64_t(bm.num_active_blocks()) * layers;
  }
  // The full pool's tables are never cut, so its active blocks are what one pool would hold.
  stats_.kv_layer_blocks_unsplit_sum += uint64_t(bm.num_active_blocks()) * layers;
  stats_.kv_running_seqs_sum += uint64_t(scheduler_->num_running());
  stats_.kv_integrity_ok = integrity_ok;
  stats_.prefix_cache_queries = bm.prefix_queries();
  stats_.prefix_cache_hits = bm.prefix_hits();
  stats_.preemptions_total = scheduler_->num_preemptions();
}

EngineStats EngineCore::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  EngineStats s = stats_;
  // Submitted requests still in the inbox are waiting too, though the scheduler has not seen
  // them yet; counting them keeps "idle" from being reported while work is queued.
  s.waiting = static_cast<int32_t>(std::max<int64_t>(0, outstanding_.load() - s.running));
  if (config_.kv_events) s.kv_events_dropped_total = config_.kv_events->dropped();
  s.time_to_first_token = ttft_.snapshot();
  s.inter_token_latency = itl_.snapshot();
  s.e2e_latency = e2e_.snapshot();
  s.queue_time = queue_.snapshot();
  return s;
}

}  // namespace ps
