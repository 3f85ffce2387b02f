#pragma once
// What engine tests do around a running Engine: submit a request that must be accepted, and
// wait for the engine to settle and check its block accounting.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "engine/engine.h"

namespace ps::testing_util {

// The request's stream; a test failure (and null) when the engine refuses it.
inline std::unique_ptr<RequestStream> submit_ok(Engine& engine, Request r) {
  SubmitResult res = engine.submit(std::move(r));
  if (auto* err = std::get_if<SubmitError>(&res)) {
    ADD_FAILURE() << "submit failed: " << err->message;
    return nullptr;
  }
  return std::move(std::get<std::unique_ptr<RequestStream>>(res));
}

// A request's events gathered: its tokens and text, and its finish event.
struct Collected {
  std::vector<int32_t> tokens;
  std::string text;
  int finish_events = 0;
  RequestOutput last;
};

// Reads `stream` to its finish event (up to 120 s), on top of what `c` already holds (a test
// that read the first event itself); checks that nothing follows the finish event.
inline Collected collect(RequestStream& stream, Collected c = {}) {
  using namespace std::chrono_literals;
  RequestOutput ev;
  const auto give_up = std::chrono::steady_clock::now() + 120s;
  while (!stream.finished() && std::chrono::steady_clock::now() < give_up) {
    if (!stream.next(&ev, 100ms)) continue;
    c.tokens.insert(c.tokens.end(), ev.token_ids.begin(), ev.token_ids.end());
    c.text += ev.text;
    if (ev.finish) {
      ++c.finish_events;
      c.last = ev;
    }
  }
  EXPECT_TRUE(stream.finished());
  EXPECT_FALSE(stream.next(&ev, 10ms));
  return c;
}

// The engine's stats once nothing runs, waits or holds a block (the engine publishes them after
// its step, so this waits up to 2 s for them to settle), checked: every block is free or cached
// and the block manager's integrity check passed.
inline EngineStats expect_settled(const Engine& engine) {
  EngineStats s;
  for (int i = 0; i < 200; ++i) {
    s = engine.stats();
    if (s.running == 0 && s.waiting == 0 && s.kv_blocks_active == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(s.running, 0);
  EXPECT_EQ(s.waiting, 0);
  EXPECT_EQ(s.kv_blocks_active, 0);
  EXPECT_EQ(s.kv_blocks_free + s.kv_blocks_cached, s.kv_blocks_total);
  EXPECT_TRUE(s.kv_integrity_ok);
  return s;
}

}  // namespace ps::testing_util
