#pragma once
// An httplib::Stream over an accepted socket whose first bytes the edge has already read (the
// request head, perhaps some body or a pipelined next request). httplib reads those from memory,
// then the socket, with a deadline on every wait.
#include <httplib.h>

#include <chrono>
#include <string>

namespace ps {

class PrereadSocketStream : public httplib::Stream {
 public:
  // Reads from the socket fail past `read_deadline` (the whole body must have arrived by then,
  // however slowly it trickles); `write_timeout_ms` bounds each wait for room to write (a client
  // that stopped reading).
  PrereadSocketStream(int fd, std::string preread,
                      std::chrono::steady_clock::time_point read_deadline, int write_timeout_ms);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return fd_; }

  // Bytes read ahead but not consumed by the request just served (a pipelined next request).
  std::string take_unread();

 private:
  int fd_;
  std::string preread_;
  size_t pos_ = 0;
  std::chrono::steady_clock::time_point read_deadline_;
  int write_timeout_ms_;

  int read_ms_left() const;
};

}  // namespace ps
