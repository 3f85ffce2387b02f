// ConnectionWatch must find the accepted socket of a request and see its peer leave.
#include "http/connection_watch.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace ps {
namespace {

struct Pair {
  int listener = -1, client = -1, server = -1;
  int server_port = 0, client_port = 0;
  ~Pair() {
    for (int fd : {listener, client, server}) {
      if (fd >= 0) close(fd);
    }
  }
};

void make_pair(Pair* p) {
  p->listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(p->listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(p->listener, 1), 0);
  socklen_t len = sizeof a;
  getsockname(p->listener, reinterpret_cast<sockaddr*>(&a), &len);
  p->server_port = ntohs(a.sin_port);
  p->client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(p->client, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  p->server = accept(p->listener, nullptr, nullptr);
  ASSERT_GE(p->server, 0);
  sockaddr_in c{};
  len = sizeof c;
  getsockname(p->client, reinterpret_cast<sockaddr*>(&c), &len);
  p->client_port = ntohs(c.sin_port);
}

// The kernel delivers the FIN asynchronously: wait for it, bounded at 30 s (a loaded machine
// may not run this thread for a while; on success this returns at once).
bool becomes_gone(const ConnectionWatch& w) {
  for (int i = 0; i < 6000; ++i) {
    if (w.peer_gone()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST(ConnectionWatch, SeesTheClientClose) {
  Pair p;
  make_pair(&p);
  ConnectionWatch w("127.0.0.1", p.server_port, "127.0.0.1", p.client_port);
  ASSERT_TRUE(w.found());
  EXPECT_FALSE(w.peer_gone());
  // Data from the client (a pipelined request) is not a disconnect, and stays unread.
  ASSERT_EQ(write(p.client, "x", 1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(w.peer_gone());
  char c = 0;
  ASSERT_EQ(read(p.server, &c, 1), 1);
  EXPECT_EQ(c, 'x');
  close(p.client);
  p.client = -1;
  EXPECT_TRUE(becomes_gone(w));
}

TEST(ConnectionWatch, UsesTheCurrentSocketOnlyWhenItsAddressesMatch) {
  Pair p;
  make_pair(&p);
  Pair other;
  make_pair(&other);
  {
    // The edge names the socket it serves: the watch takes it, checked against the addresses.
    ConnectionWatch::CurrentSocket current(p.server);
    ConnectionWatch w("127.0.0.1", p.server_port, "127.0.0.1", p.client_port);
    ASSERT_TRUE(w.found());
    close(p.client);
    p.client = -1;
    EXPECT_TRUE(becomes_gone(w));
  }
  {
    // A current socket of another connection is not trusted: the search finds the right one.
    ConnectionWatch::CurrentSocket current(p.server);
    ConnectionWatch w("127.0.0.1", other.server_port, "127.0.0.1", other.client_port);
    ASSERT_TRUE(w.found());
    EXPECT_FALSE(w.peer_gone());
    close(other.client);
    other.client = -1;
    EXPECT_TRUE(becomes_gone(w));
  }
}

TEST(ConnectionWatch, UnknownAddressNeverReportsGone) {
  ConnectionWatch w("not-an-address", 1, "127.0.0.1", 2);
  EXPECT_FALSE(w.found());
  EXPECT_FALSE(w.peer_gone());
  ConnectionWatch none("127.0.0.1", 1, "127.0.0.1", 2);  // no such socket
  EXPECT_FALSE(none.found());
}

}  // namespace
}  // namespace ps
