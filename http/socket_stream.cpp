#include "http/socket_stream.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace ps {
namespace {

bool wait_for(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  for (;;) {
    int r = ::poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    return r > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
  }
}

void ip_and_port(const sockaddr_storage& addr, socklen_t len, std::string& ip, int& port) {
  char host[NI_MAXHOST] = {0};
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, nullptr, 0,
                  NI_NUMERICHOST) != 0) {
    return;
  }
  ip = host;
  if (addr.ss_family == AF_INET) {
    port = ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
  } else if (addr.ss_family == AF_INET6) {
    port = ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
  }
}

}  // namespace

PrereadSocketStream::PrereadSocketStream(int fd, std::string preread,
                                         std::chrono::steady_clock::time_point read_deadline,
                                         int write_timeout_ms)
    : fd_(fd),
      preread_(std::move(preread)),
      read_deadline_(read_deadline),
      write_timeout_ms_(write_timeout_ms) {}

int PrereadSocketStream::read_ms_left() const {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  read_deadline_ - std::chrono::steady_clock::now())
                  .count();
  return left > 0 ? static_cast<int>(std::min<int64_t>(left, 1 << 30)) : 0;
}

bool PrereadSocketStream::is_readable() const {
  return pos_ < preread_.size() || wait_for(fd_, POLLIN, read_ms_left());
}

bool PrereadSocketStream::is_writable() const {
  return wait_for(fd_, POLLOUT, write_timeout_ms_);
}

ssize_t PrereadSocketStream::read(char* ptr, size_t size) {
  if (pos_ < preread_.size()) {
    size_t n = std::min(size, preread_.size() - pos_);
    std::memcpy(ptr, preread_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  if (!wait_for(fd_, POLLIN, read_ms_left())) return -1;
  for (;;) {
    ssize_t n = ::recv(fd_, ptr, size, 0);
    if (n < 0 && errno == EINTR) continue;
    return n;
  }
}

ssize_t PrereadSocketStream::write(const char* ptr, size_t size) {
  size_t done = 0;
  while (done < size) {
    if (!wait_for(fd_, POLLOUT, write_timeout_ms_)) return -1;
    ssize_t n = ::send(fd_, ptr + done, size - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

void PrereadSocketStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    ip_and_port(addr, len, ip, port);
  }
}

void PrereadSocketStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    ip_and_port(addr, len, ip, port);
  }
}

std::string PrereadSocketStream::take_unread() {
  std::string rest = pos_ < preread_.size() ? preread_.substr(pos_) : std::string();
  preread_.clear();
  pos_ = 0;
  return rest;
}

}  // namespace ps
