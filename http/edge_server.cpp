// EdgeServer (edge_server.h) as httplib sees it: the inline task queue that hands each accepted
// socket to the waiting room (edge_room.cpp), and serving one request on a worker.
#include "http/edge_server.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "http/connection_watch.h"
#include "http/edge_room.h"
#include "http/socket_stream.h"

namespace ps {
namespace {

// Runs each task where it is enqueued. httplib's accept loop enqueues one task per accepted
// socket; ours only moves the socket into the waiting room, so running it inline is cheap and
// no connection ever waits in a queue before the room sees it.
class InlineQueue : public httplib::TaskQueue {
 public:
  explicit InlineQueue(std::function<void()> on_shutdown) : on_shutdown_(std::move(on_shutdown)) {}
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { on_shutdown_(); }

 private:
  std::function<void()> on_shutdown_;
};

}  // namespace

EdgeServer::EdgeServer(EdgeOptions options) : options_(options) {
  room_ = std::make_unique<Room>(*this);
  new_task_queue = [this] { return new InlineQueue([this] { room_->shutdown(); }); };
}

EdgeServer::~EdgeServer() {
  room_->shutdown();
}

EdgeCounts EdgeServer::counts() const {
  return room_->counts();
}

bool EdgeServer::process_and_close_socket(socket_t sock) {
  room_->admit(sock);
  return true;
}

bool EdgeServer::serve_one(int fd, std::string* buffered, bool close_connection) {
  PrereadSocketStream strm(
      fd, std::move(*buffered),
      std::chrono::steady_clock::now() + std::chrono::seconds(options_.body_timeout_s),
      options_.write_timeout_s * 1000);
  bool closed = false;
  ConnectionWatch::CurrentSocket current(fd);
  const bool ok = process_request(strm, close_connection, closed, nullptr);
  *buffered = strm.take_unread();
  return ok && !closed && !close_connection;
}

}  // namespace ps
