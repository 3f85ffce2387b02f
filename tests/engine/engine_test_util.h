#pragma once
// What engine tests do around a running Engine: submit a request that must be accepted, and
// wait for the engine to settle and check its block accounting.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <utility>
#include <variant>

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
