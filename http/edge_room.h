#pragma once
// EdgeServer's waiting room (edge_server.h): the one epoll thread that holds connections between
// requests, with their deadlines and the connection caps, and hands a connection to a worker once
// its request head is in. Declared here so edge_room.cpp can hold it apart from the httplib glue
// in edge_server.cpp. Internal to http/: include edge_server.h instead.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "http/edge_server.h"
#include "http/worker_pool.h"

namespace ps {

// The waiting room: connections between requests, watched by one epoll thread.
class EdgeServer::Room {
 public:
  explicit Room(EdgeServer& server);
  ~Room() { shutdown(); }

  // A newly accepted socket (accept thread).
  void admit(int fd);

  // A connection whose response is done and that stays open (a worker).
  void give_back(int fd, std::string buffered, std::string peer, size_t served);
  bool stopping();
  void shutdown();
  EdgeCounts counts();

 private:
  using Clock = std::chrono::steady_clock;

  struct Conn {
    int fd = -1;
    std::string peer;
    std::string buf;        // bytes read so far: a head in progress, or more
    size_t searched = 0;    // how much of buf has been searched for the head's end
    bool partial = false;   // some of a head has arrived
    int doomed_status = 0;  // non-zero: answer this status once the head is in, then close
    size_t served = 0;      // requests served on this connection
    Clock::time_point deadline;
    Clock::time_point since;  // when it entered the room
  };

  // Closes the connection that has waited longest in the room for a request (not a refused
  // one). Needs mu_. False when there is none.
  bool evict_longest_waiting_locked();
  void watch_locked(Conn c);
  // Closes a connection and forgets it in the counts. Needs mu_.
  void release_locked(const Conn& c);
  void release(const Conn& c);
  void dispatch(Conn c);
  // On a worker.
  void serve(Conn& c);
  void on_readable(int fd);
  void forget_locked(std::unordered_map<int, Conn>::iterator it);
  void expire(Clock::time_point now);
  void loop();

  EdgeServer& server_;
  const EdgeOptions& o_;
  std::mutex mu_;
  std::unordered_map<int, Conn> conns_;
  std::unordered_map<std::string, int> per_peer_;
  int64_t open_ = 0, doomed_ = 0, queued_ = 0, active_ = 0;
  uint64_t refused_total_ = 0, header_timeouts_total_ = 0, evicted_total_ = 0;
  bool stopping_ = false;
  int epfd_ = -1, wake_fd_ = -1;
  std::thread thread_;
  GrowingWorkerPool pool_;  // workers start as requests need them
};

}  // namespace ps
