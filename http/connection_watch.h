#pragma once
// Tells a handler that its client has gone away, so the request is cancelled and its blocks
// freed within a step (docs/architecture.md §6) instead of after the whole generation.
//
// cpp-httplib 0.11 gives handlers no socket and no "is the peer still there" call, and a write
// to a socket whose peer closed succeeds once before failing. So we find the accepted socket
// by its address pair, once per request, and peek at it: a FIN or RST means the client left.
#include <string>

namespace ps {

class ConnectionWatch {
 public:
  // While one is alive on a thread, watches made on that thread look at `fd` first (the edge
  // knows the socket it serves), instead of searching every open descriptor of the process.
  class CurrentSocket {
   public:
    explicit CurrentSocket(int fd);
    ~CurrentSocket();
    CurrentSocket(const CurrentSocket&) = delete;
    CurrentSocket& operator=(const CurrentSocket&) = delete;
  };

  // The request's local and peer address/port as httplib reports them. When no socket matches
  // (an unexpected address format), the watch never reports the client gone; a failed write
  // still ends the stream.
  ConnectionWatch(const std::string& local_addr, int local_port, const std::string& remote_addr,
                  int remote_port);

  bool found() const { return fd_ >= 0; }
  // True once the peer has closed or reset the connection. Data the client sent (a pipelined
  // request) is left unread for httplib.
  bool peer_gone() const;

 private:
  int fd_ = -1;
};

}  // namespace ps
