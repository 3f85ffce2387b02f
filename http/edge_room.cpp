// EdgeServer's waiting room (edge_room.h): admitting sockets under the connection caps, reading
// request heads on one epoll thread, deadlines, eviction, the edge's own canned answers, and
// handing a connection with a whole head to a worker. Split from edge_server.cpp, which holds the
// httplib glue around it.
#include "http/edge_room.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "http/request_head.h"

namespace ps {
namespace {

// The peer's address without its port: what the per-client cap counts.
std::string peer_address(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  char host[NI_MAXHOST] = {0};
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, nullptr, 0,
                  NI_NUMERICHOST) != 0) {
    return "?";
  }
  return host;
}

// An answer the edge writes itself, without a worker, before closing: over a cap, a head too
// long, a head too slow. Best effort: the socket's buffer has room for a few hundred bytes.
void send_canned(int fd, int status) {
  const char* reason = "Service Unavailable";
  const char* message = "the server has too many open connections; retry shortly";
  const char* code = "too_many_connections";
  if (status == 429) {
    reason = "Too Many Requests";
    message = "too many open connections from your address; close some and retry";
    code = "too_many_connections_from_client";
  } else if (status == 431) {
    reason = "Request Header Fields Too Large";
    message = "the request line and headers are too long";
    code = "header_too_large";
  } else if (status == 408) {
    reason = "Request Timeout";
    message = "the request headers did not arrive in time";
    code = "header_timeout";
  }
  std::string body = std::string("{\"error\":{\"message\":\"") + message +
                     "\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"" + code +
                     "\"}}";
  if (status == 503) {
    body = std::string("{\"error\":{\"message\":\"") + message +
           "\",\"type\":\"server_error\",\"param\":null,\"code\":\"" + code + "\"}}";
  }
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                    "\r\nContent-Type: application/json\r\nConnection: close\r\n";
  if (status == 429 || status == 503) out += "Retry-After: 1\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  [[maybe_unused]] ssize_t n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// HTTP workers run below the engine's compute threads (nice +10 relative to the process, once
// per worker thread). On a machine whose cores are all the engine's (2 here), hundreds of
// streaming handlers woken after every step otherwise preempt the OpenMP threads between their
// barriers, and every barrier then waits a scheduler tick: at 256 streaming clients that cut
// output tok/s to 0.55x of the same workload in-process (issue #14). A handler only formats
// and writes what a step produced, so running it in the gaps delays no token by more than a
// step. Linux-only (per-thread nice); elsewhere a no-op.
void yield_cpu_to_the_engine() {
#ifdef __linux__
  thread_local bool done = false;
  if (done) return;
  done = true;
  const pid_t tid = static_cast<pid_t>(::syscall(SYS_gettid));
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  if (errno == 0) ::setpriority(PRIO_PROCESS, static_cast<id_t>(tid), std::min(19, now + 10));
#endif
}

}  // namespace

EdgeServer::Room::Room(EdgeServer& server)
    : server_(server),
      o_(server.options_),
      pool_(static_cast<size_t>(std::max(1, server.options_.workers))) {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  epoll_ctl(epfd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  thread_ = std::thread([this] { loop(); });
}

void EdgeServer::Room::admit(int fd) {
  int yes = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);  // SSE chunks are small
  Conn c;
  c.fd = fd;
  c.peer = peer_address(fd);
  c.deadline = Clock::now() + std::chrono::seconds(o_.header_timeout_s);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    const bool client_full = o_.max_connections_per_client > 0 && per_peer_.count(c.peer) > 0 &&
                             per_peer_[c.peer] >= o_.max_connections_per_client;
    // At the cap, a connection that is only waiting (idle, or a head still arriving) makes
    // room: the one that has waited longest is closed, so stalled or idle clients can never
    // lock out one that sends a whole request. Only when every connection is being served is
    // the new one refused.
    if (client_full) {
      c.doomed_status = 429;
    } else if (open_ >= o_.max_connections && !evict_longest_waiting_locked()) {
      c.doomed_status = 503;
    }
    int& from_peer = per_peer_[c.peer];
    if (c.doomed_status != 0) {
      ++refused_total_;
      if (from_peer == 0) per_peer_.erase(c.peer);
      // A refused connection waits (briefly) for its request head, so the client reads our
      // answer instead of a reset; past a few of those, it is just closed.
      if (doomed_ >= std::max(16, o_.max_connections / 8)) {
        ::close(fd);
        return;
      }
      ++doomed_;
      c.deadline = Clock::now() + std::chrono::seconds(1);
    } else {
      ++open_;
      ++from_peer;
    }
    watch_locked(std::move(c));
  }
}

void EdgeServer::Room::give_back(int fd, std::string buffered, std::string peer, size_t served) {
  Conn c;
  c.fd = fd;
  c.peer = std::move(peer);
  c.served = served;
  c.buf = std::move(buffered);
  const auto now = Clock::now();
  if (!c.buf.empty()) {
    // Pipelined: the next request (or its start) came with the last one.
    if (request_head_length(c.buf) > 0 && !stopping()) return dispatch(std::move(c));
    c.partial = true;
    c.deadline = now + std::chrono::seconds(o_.header_timeout_s);
  } else {
    c.deadline = now + std::chrono::seconds(o_.keep_alive_timeout_s);
  }
  c.searched = c.buf.size();
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return release_locked(c);
  watch_locked(std::move(c));
}

bool EdgeServer::Room::stopping() {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

void EdgeServer::Room::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [fd, c] : conns_) release_locked(c);
    conns_.clear();
  }
  pool_.shutdown();  // in-flight requests finish; their connections then close
  ::close(epfd_);
  ::close(wake_fd_);
}

EdgeCounts EdgeServer::Room::counts() {
  EdgeCounts out;
  std::lock_guard<std::mutex> lock(mu_);
  out.open = open_;
  for (auto& [fd, c] : conns_) {
    if (c.doomed_status != 0) continue;
    if (c.partial) {
      ++out.reading_head;
    } else {
      ++out.idle;
    }
  }
  out.queued = queued_;
  out.active = active_;
  out.refused_total = refused_total_;
  out.header_timeouts_total = header_timeouts_total_;
  out.evicted_total = evicted_total_;
  return out;
}

bool EdgeServer::Room::evict_longest_waiting_locked() {
  auto victim = conns_.end();
  for (auto it = conns_.begin(); it != conns_.end(); ++it) {
    if (it->second.doomed_status != 0) continue;
    if (victim == conns_.end() || it->second.since < victim->second.since) victim = it;
  }
  if (victim == conns_.end()) return false;
  if (victim->second.partial) send_canned(victim->first, 408);
  ++evicted_total_;
  forget_locked(victim);
  return true;
}

void EdgeServer::Room::watch_locked(Conn c) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = c.fd;
  const int fd = c.fd;
  c.since = Clock::now();
  conns_[fd] = std::move(c);
  epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
}

void EdgeServer::Room::release_locked(const Conn& c) {
  ::close(c.fd);
  if (c.doomed_status != 0) {
    --doomed_;
    return;
  }
  --open_;
  auto it = per_peer_.find(c.peer);
  if (it != per_peer_.end() && --it->second <= 0) per_peer_.erase(it);
}

void EdgeServer::Room::release(const Conn& c) {
  std::lock_guard<std::mutex> lock(mu_);
  release_locked(c);
}

void EdgeServer::Room::dispatch(Conn c) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++queued_;
  }
  auto shared = std::make_shared<Conn>(std::move(c));
  pool_.enqueue([this, shared] { serve(*shared); });
}

void EdgeServer::Room::serve(Conn& c) {
  yield_cpu_to_the_engine();
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --queued_;
    ++active_;
    stopping = stopping_;
  }
  const bool close =
      stopping || server_.draining_.load() || c.served + 1 >= o_.keep_alive_max_count;
  bool keep = server_.serve_one(c.fd, &c.buf, close);
  {
    std::lock_guard<std::mutex> lock(mu_);
    --active_;
    if (!keep || stopping_) return release_locked(c);
  }
  give_back(c.fd, std::move(c.buf), std::move(c.peer), c.served + 1);
}

void EdgeServer::Room::on_readable(int fd) {
  Conn ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    Conn& c = it->second;
    char tmp[16384];
    size_t room = o_.max_head_bytes + 1 > c.buf.size() ? o_.max_head_bytes + 1 - c.buf.size() : 1;
    ssize_t n = ::recv(fd, tmp, std::min(sizeof tmp, room), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) return forget_locked(it);  // the client closed (or reset) the connection
    c.buf.append(tmp, static_cast<size_t>(n));
    const size_t head = request_head_length(c.buf, c.searched);
    c.searched = c.buf.size();
    if (head == 0) {
      if (c.buf.size() > o_.max_head_bytes) {
        send_canned(fd, c.doomed_status != 0 ? c.doomed_status : 431);
        return forget_locked(it);
      }
      if (!c.partial) {
        c.partial = true;
        c.deadline = std::min(c.deadline, Clock::now() + std::chrono::seconds(o_.header_timeout_s));
      }
      return;
    }
    if (c.doomed_status != 0) {
      send_canned(fd, c.doomed_status);
      return forget_locked(it);
    }
    epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
    ready = std::move(c);
    conns_.erase(it);
  }
  dispatch(std::move(ready));
}

void EdgeServer::Room::forget_locked(std::unordered_map<int, Conn>::iterator it) {
  epoll_ctl(epfd_, EPOLL_CTL_DEL, it->first, nullptr);
  release_locked(it->second);
  conns_.erase(it);
}

void EdgeServer::Room::expire(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = conns_.begin(); it != conns_.end();) {
    auto next = std::next(it);
    Conn& c = it->second;
    if (c.deadline <= now) {
      if (c.doomed_status != 0) {
        send_canned(c.fd, c.doomed_status);
      } else if (c.partial) {
        ++header_timeouts_total_;
        send_canned(c.fd, 408);
      } else if (c.served == 0) {
        ++header_timeouts_total_;  // connected and never sent a byte
      }
      forget_locked(it);
    }
    it = next;
  }
}

void EdgeServer::Room::loop() {
  std::vector<epoll_event> events(512);
  auto last_scan = Clock::now();
  for (;;) {
    int n = epoll_wait(epfd_, events.data(), static_cast<int>(events.size()), 100);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_fd_) continue;
      on_readable(events[i].data.fd);
    }
    const auto now = Clock::now();
    if (now - last_scan >= std::chrono::milliseconds(100)) {
      expire(now);
      last_scan = now;
    }
  }
}

}  // namespace ps
