#include "kvevents/kv_event_publisher.h"

#include <chrono>
#include <stdexcept>
#include <vector>
#include <zmq.hpp>

#include "kvevents/kv_event_encoding.h"

namespace ps {
namespace {

std::string big_endian(int64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(static_cast<uint64_t>(v) & 0xff);
    v = static_cast<int64_t>(static_cast<uint64_t>(v) >> 8);
  }
  return out;
}

int64_t from_big_endian(const zmq::message_t& m) {
  uint64_t v = 0;
  const auto* p = static_cast<const unsigned char*>(m.data());
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return static_cast<int64_t>(v);
}

void bind(zmq::socket_t& socket, const std::string& endpoint, const char* field) {
  try {
    socket.bind(endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(std::string("cannot bind ") + field + " '" + endpoint +
                             "': " + e.what());
  }
}

}  // namespace

struct KvEventPublisher::Sockets {
  zmq::context_t context{1};
  zmq::socket_t pub{context, zmq::socket_type::pub};
  std::unique_ptr<zmq::socket_t> replay;
};

KvEventPublisher::KvEventPublisher(const KvEventsConfig& config)
    : config_(config), sockets_(std::make_unique<Sockets>()) {
  Sockets& s = *sockets_;
  // Closing never waits for a subscriber to take what is still queued.
  s.pub.set(zmq::sockopt::linger, 0);
  s.pub.set(zmq::sockopt::sndhwm, config_.hwm);
  bind(s.pub, config_.endpoint, "endpoint");
  if (config_.replay_endpoint) {
    s.replay = std::make_unique<zmq::socket_t>(s.context, zmq::socket_type::router);
    s.replay->set(zmq::sockopt::linger, 0);
    bind(*s.replay, *config_.replay_endpoint, "replay_endpoint");
  }
  thread_ = std::thread([this] { run(); });
}

KvEventPublisher::~KvEventPublisher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void KvEventPublisher::publish(KvEventBatch batch) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= config_.max_queue_size) {
      dropped_.fetch_add(1);
      return;
    }
    queue_.push_back(std::move(batch));
  }
  wake_.notify_one();
}

void KvEventPublisher::run() {
  using namespace std::chrono_literals;
  while (true) {
    std::deque<KvEventBatch> ready;
    bool stop = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // With a replay socket to watch, wake often enough to answer it; else sleep until woken.
      if (sockets_->replay) {
        wake_.wait_for(lock, 5ms, [this] { return stopping_ || !queue_.empty(); });
      } else {
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      }
      ready.swap(queue_);
      stop = stopping_;
    }
    for (const KvEventBatch& b : ready) send(b);
    if (sockets_->replay) serve_replay();
    if (stop) return;
  }
}

void KvEventPublisher::send(const KvEventBatch& batch) {
  std::string payload = encode_kv_event_batch(batch);
  const std::string seq = big_endian(static_cast<int64_t>(batch.seq));
  zmq::socket_t& pub = sockets_->pub;
  // PUB never blocks: past the high-water mark ZMQ drops the message for that subscriber.
  pub.send(zmq::buffer(config_.topic), zmq::send_flags::sndmore);
  pub.send(zmq::buffer(seq), zmq::send_flags::sndmore);
  pub.send(zmq::buffer(payload), zmq::send_flags::none);
  kept_.emplace_back(batch.seq, std::move(payload));
  while (kept_.size() > config_.buffer_steps) kept_.pop_front();
}

void KvEventPublisher::serve_replay() {
  zmq::socket_t& router = *sockets_->replay;
  while (true) {
    std::vector<zmq::message_t> frames;
    zmq::message_t frame;
    if (!router.recv(frame, zmq::recv_flags::dontwait)) return;
    frames.push_back(std::move(frame));
    while (frames.back().more()) {
      zmq::message_t part;
      if (!router.recv(part, zmq::recv_flags::none)) break;
      frames.push_back(std::move(part));
    }
    // [identity, empty delimiter, start seq]: what a REQ or a DEALER sending ["", seq] gives.
    if (frames.size() != 3 || frames[1].size() != 0 || frames[2].size() != 8) continue;
    const int64_t start = from_big_endian(frames[2]);
    const std::string identity = frames[0].to_string();
    for (const auto& [seq, payload] : kept_) {
      if (static_cast<int64_t>(seq) < start) continue;
      router.send(zmq::buffer(identity), zmq::send_flags::sndmore);
      router.send(zmq::message_t(), zmq::send_flags::sndmore);
      router.send(zmq::buffer(big_endian(static_cast<int64_t>(seq))), zmq::send_flags::sndmore);
      router.send(zmq::buffer(payload), zmq::send_flags::none);
    }
    router.send(zmq::buffer(identity), zmq::send_flags::sndmore);
    router.send(zmq::message_t(), zmq::send_flags::sndmore);
    router.send(zmq::buffer(big_endian(-1)), zmq::send_flags::sndmore);
    router.send(zmq::message_t(), zmq::send_flags::none);
  }
}

}  // namespace ps
