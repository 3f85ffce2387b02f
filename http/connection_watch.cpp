#include "http/connection_watch.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ps {
namespace {

// Parses "127.0.0.1" or "::1" (or a v4-mapped "::ffff:1.2.3.4") into a comparable form.
bool parse_addr(const std::string& text, int port, sockaddr_storage* out) {
  std::memset(out, 0, sizeof *out);
  auto* v4 = reinterpret_cast<sockaddr_in*>(out);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(out);
  if (inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    return true;
  }
  if (inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    return true;
  }
  return false;
}

bool same(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET) {
    auto& x = reinterpret_cast<const sockaddr_in&>(a);
    auto& y = reinterpret_cast<const sockaddr_in&>(b);
    return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
  }
  auto& x = reinterpret_cast<const sockaddr_in6&>(a);
  auto& y = reinterpret_cast<const sockaddr_in6&>(b);
  return x.sin6_port == y.sin6_port &&
         std::memcmp(&x.sin6_addr, &y.sin6_addr, sizeof x.sin6_addr) == 0;
}

bool sock_matches(int fd, const sockaddr_storage& local, const sockaddr_storage& peer) {
  sockaddr_storage got{};
  socklen_t len = sizeof got;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&got), &len) != 0 || !same(got, peer)) {
    return false;
  }
  len = sizeof got;
  std::memset(&got, 0, sizeof got);
  return getsockname(fd, reinterpret_cast<sockaddr*>(&got), &len) == 0 && same(got, local);
}

thread_local int current_socket = -1;

}  // namespace

ConnectionWatch::CurrentSocket::CurrentSocket(int fd) {
  current_socket = fd;
}

ConnectionWatch::CurrentSocket::~CurrentSocket() {
  current_socket = -1;
}

ConnectionWatch::ConnectionWatch(const std::string& local_addr, int local_port,
                                 const std::string& remote_addr, int remote_port) {
  sockaddr_storage local{}, peer{};
  if (!parse_addr(local_addr, local_port, &local) || !parse_addr(remote_addr, remote_port, &peer)) {
    return;
  }
  // Checked, not trusted: the addresses must still be this request's.
  if (current_socket >= 0 && sock_matches(current_socket, local, peer)) {
    fd_ = current_socket;
    return;
  }
  // The socket cannot close while we look: the worker thread that owns it is running us.
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    int fd = std::atoi(e->d_name);
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    if (sock_matches(fd, local, peer)) {
      fd_ = fd;
      break;
    }
  }
  closedir(dir);
}

bool ConnectionWatch::peer_gone() const {
  if (fd_ < 0) return false;
  char c;
  ssize_t n = recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return false;  // the client sent more; it is still there
  if (n == 0) return true;  // orderly close
  return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

}  // namespace ps
