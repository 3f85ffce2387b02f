#include "http/shutdown_signal.h"

#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace ps {
namespace {

sigset_t shutdown_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

ShutdownSignal::ShutdownSignal() {
  std::signal(SIGPIPE, SIG_IGN);
  // A shell starts background jobs with SIGINT ignored, and an ignored signal is dropped before
  // sigwait can see it; the server must still stop on Ctrl-C / SIGINT.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  sigset_t set = shutdown_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void ShutdownSignal::stop() {
  stop_.store(true);
  if (waiter_.joinable()) waiter_.join();
}

// The mask stays: a signal arriving while the process exits must not turn exit 0 into a kill.
ShutdownSignal::~ShutdownSignal() {
  stop();
}

void ShutdownSignal::start(std::function<void(int)> on_signal) {
  waiter_ = std::thread([this, on_signal = std::move(on_signal)] {
    sigset_t set = shutdown_set();
    std::thread handler;
    // A timed wait, so the destructor can stop this thread without sending it a signal.
    const timespec tick{0, 100 * 1000 * 1000};
    while (!stop_.load()) {
      int signo = sigtimedwait(&set, nullptr, &tick);
      if (signo < 0) continue;
      if (received_.exchange(true)) {
        std::fprintf(stderr, "pagedserve: second signal, exiting now\n");
        std::_Exit(1);
      }
      std::fprintf(stderr, "pagedserve: signal %d, shutting down\n", signo);
      // The shutdown runs beside this loop so that a second signal is still noticed.
      handler = std::thread([&on_signal, signo] { on_signal(signo); });
    }
    if (handler.joinable()) handler.join();
  });
}

}  // namespace ps
