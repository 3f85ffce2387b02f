#pragma once
// The server's edge: an httplib::Server that gives a worker thread to a connection only once a
// whole request head has arrived on it, and takes the thread back when the response is done.
//
// Stock httplib hands every accepted connection to a worker for its whole life, so clients that
// send half a request (or keep an idle connection open) hold all the workers and everyone else
// waits: 300 such connections delayed a normal request by 9 s (issue #20). Here one epoll thread
// (the waiting room) holds connections that are between requests: new ones, idle keep-alive ones,
// and ones whose head is still arriving, each under a deadline. Caps on open connections, in all
// and per client address, bound what the room holds.
#include <httplib.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace ps {

struct EdgeOptions {
  int workers = 512;              // threads that serve requests (a stream holds one throughout)
  int header_timeout_s = 5;       // a request head must arrive within this of its first byte
  int keep_alive_timeout_s = 75;  // idle keep-alive; longer than a proxy's (nginx: 60 s)
  int body_timeout_s = 30;        // a request body must have arrived this long after its head
  int write_timeout_s = 30;       // each wait for a client to take more of a response
  int max_connections = 8192;     // open connections in all; at it, the longest-waiting idle one
                                  // is closed to make room, or with none, 503
  int max_connections_per_client = 0;   // per peer address; 0: no cap (behind a proxy, all
                                        // connections come from the proxy); over it: 429
  size_t max_head_bytes = 64 * 1024;    // a longer request head: 431, closed
  size_t keep_alive_max_count = 10000;  // requests per connection before it is closed
};

// What the edge holds now (gauges) and has refused (counters), for /metrics.
struct EdgeCounts {
  int64_t open = 0;                    // all accepted connections not yet closed
  int64_t reading_head = 0;            // in the room with part of a request head
  int64_t idle = 0;                    // in the room with nothing sent yet (new or keep-alive)
  int64_t queued = 0;                  // head complete, waiting for a free worker
  int64_t active = 0;                  // a worker is serving its request
  uint64_t refused_total = 0;          // over a connection cap
  uint64_t header_timeouts_total = 0;  // closed because a head did not arrive in time
  uint64_t evicted_total = 0;          // waiting connections closed at the cap to admit a new one
};

class EdgeServer : public httplib::Server {
 public:
  explicit EdgeServer(EdgeOptions options);
  ~EdgeServer() override;

  // While draining, every response says "Connection: close", so proxies stop reusing this
  // replica's connections.
  void set_draining(bool on) { draining_.store(on); }
  EdgeCounts counts() const;
  // Before listening: the open-file limit may allow fewer connections than asked for.
  void set_max_connections(int n) { options_.max_connections = n; }
  int max_connections() const { return options_.max_connections; }

 private:
  class Room;
  friend class Room;
  // httplib calls this for each accepted socket, on its accept thread (our task queue runs the
  // task inline): the socket goes to the waiting room, which costs no thread.
  bool process_and_close_socket(socket_t sock) override;
  // On a worker: one request on a connection whose head the room has read into `buffered`
  // (left holding what was read past that request). True: the connection may stay open.
  bool serve_one(int fd, std::string* buffered, bool close_connection);

  EdgeOptions options_;
  std::atomic<bool> draining_{false};
  std::unique_ptr<Room> room_;
};

}  // namespace ps
