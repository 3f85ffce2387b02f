#pragma once
// The ZMQ side of KV-cache events, as vLLM's ZmqEventPublisher speaks it, so llm-d's and
// Dynamo's subscribers can read a pagedserve replica:
//   PUB at `endpoint`: one message per batch, frames [topic, seq (8 bytes, big-endian),
//     payload (kv_event_encoding.h)];
//   ROUTER at `replay_endpoint`: a client (DEALER or REQ) sends [start_seq (8 bytes,
//     big-endian)]; it gets [seq, payload] for every kept batch from start_seq on, then
//     [-1 (8 bytes), empty payload] to end the replay.
// The engine thread only queues a batch (publish() never blocks: past max_queue_size the batch
// is dropped and counted); this object's own thread encodes, sends and answers replays. A
// subscriber that never reads costs nothing but ZMQ's buffer up to the high-water mark, past
// which ZMQ drops its messages; the last buffer_steps batches stay replayable.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "engine/kv_event_sink.h"
#include "kvevents/kv_events_config.h"

namespace ps {

class KvEventPublisher final : public KvEventSink {
 public:
  // Binds both sockets; throws std::runtime_error naming the endpoint ZMQ refused.
  explicit KvEventPublisher(const KvEventsConfig& config);
  ~KvEventPublisher() override;  // sends what is queued, then closes
  KvEventPublisher(const KvEventPublisher&) = delete;
  KvEventPublisher& operator=(const KvEventPublisher&) = delete;

  void publish(KvEventBatch batch) override;
  uint64_t dropped() const override { return dropped_.load(); }

 private:
  struct Sockets;  // the ZMQ context and sockets: touched only by the publisher thread
  void run();
  void send(const KvEventBatch& batch);
  void serve_replay();

  KvEventsConfig config_;
  std::unique_ptr<Sockets> sockets_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<KvEventBatch> queue_;
  bool stopping_ = false;
  std::deque<std::pair<uint64_t, std::string>> kept_;  // (seq, payload), oldest first
  std::atomic<uint64_t> dropped_{0};
  std::thread thread_;
};

}  // namespace ps
