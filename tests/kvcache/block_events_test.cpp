// KV-cache events (issue #39): applying every recorded event to an empty multiset of keys gives
// exactly the keys the prefix cache holds, after every operation of a random workload with
// shared prefixes, deduplication, eviction under pressure and forced key collisions.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "kvcache/block_manager.h"

namespace ps {
namespace {

struct Mirror {
  std::map<uint64_t, int> keys;  // key -> blocks holding it, as the events say
  void apply(const std::vector<BlockEvent>& events, int32_t block_size) {
    for (const BlockEvent& e : events) {
      if (const auto* s = std::get_if<BlockStored>(&e)) {
        ASSERT_FALSE(s->hashes.empty());
        ASSERT_EQ(s->token_ids.size(), s->hashes.size() * static_cast<size_t>(block_size));
        // A stored run's parent is a key the cache holds (or nothing: a first block).
        if (s->parent) {
          EXPECT_GT(keys[*s->parent], 0) << "parent not cached";
        }
        for (uint64_t h : s->hashes) keys[h] += 1;
      } else {
        const uint64_t h = std::get<BlockRemoved>(e).hash;
        ASSERT_GT(keys[h], 0) << "removed a key the mirror does not hold";
        keys[h] -= 1;
      }
    }
  }
  std::map<uint64_t, int> live() const {
    std::map<uint64_t, int> out;
    for (auto [k, n] : keys) {
      if (n > 0) out[k] = n;
    }
    return out;
  }
};

std::map<uint64_t, int> counted(const std::vector<uint64_t>& keys) {
  std::map<uint64_t, int> out;
  for (uint64_t k : keys) out[k] += 1;
  return out;
}

void run_workload(BlockHasher hasher, uint32_t seed) {
  const int32_t bs = 2;
  BlockManager bm(12, bs, true, std::move(hasher));
  bm.set_record_events(true);
  Mirror mirror;
  std::mt19937 rng(seed);
  std::map<int64_t, std::vector<int32_t>> live;  // seq -> its tokens
  int64_t next = 0;
  int evictions_seen = 0;
  for (int op = 0; op < 400; ++op) {
    if (live.size() < 3 && rng() % 3 != 0) {
      // A prompt from a few shared prefixes, so later ones hit and deduplicate.
      std::vector<int32_t> tokens;
      const int32_t prefix = static_cast<int32_t>(rng() % 3);
      const int32_t len = 2 + static_cast<int32_t>(rng() % 7);
      for (int32_t i = 0; i < len; ++i)
        tokens.push_back(i < 4 ? prefix * 10 + i : int32_t(rng() % 5));
      PrefixMatch m = bm.match_prefix(tokens);
      if (!bm.can_allocate(m, len)) continue;
      bm.allocate(next, m, len);
      bm.publish(next, tokens, len);
      live[next++] = tokens;
    } else if (!live.empty()) {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      bm.free(it->first);
      live.erase(it);
    }
    const std::vector<BlockEvent> events = bm.take_events();
    for (const BlockEvent& e : events) evictions_seen += std::holds_alternative<BlockRemoved>(e);
    mirror.apply(events, bs);
    ASSERT_EQ(mirror.live(), counted(bm.published_keys())) << "after operation " << op;
    bm.check_integrity();
  }
  EXPECT_GT(evictions_seen, 0) << "the workload never evicted: it tests too little";
}

TEST(BlockEvents, MirrorHoldsExactlyThePublishedKeys) {
  for (uint32_t seed = 1; seed <= 5; ++seed) run_workload({}, seed);
}

TEST(BlockEvents, MirrorHoldsThemUnderForcedKeyCollisions) {
  // Few distinct keys: different blocks share keys, so the mirror must count, not just hold.
  auto colliding = [](uint64_t parent, std::span<const int32_t> tokens) {
    return (default_block_hash(parent, tokens) % 3) + 1;
  };
  for (uint32_t seed = 1; seed <= 5; ++seed) run_workload(colliding, seed);
}

TEST(BlockEvents, RunsCarryTheirChainParentAndTokens) {
  BlockManager bm(8, 2, true);
  bm.set_record_events(true);
  const std::vector<int32_t> a = {1, 2, 3, 4, 5};
  bm.allocate(1, bm.match_prefix(a), 5);
  bm.publish(1, a, 5);
  std::vector<BlockEvent> ev = bm.take_events();
  ASSERT_EQ(ev.size(), 1u);
  const BlockStored first = std::get<BlockStored>(ev[0]);
  EXPECT_EQ(first.hashes.size(), 2u);  // two full blocks; the 5th token's block is not full
  EXPECT_FALSE(first.parent);
  EXPECT_EQ(first.token_ids, (std::vector<int32_t>{1, 2, 3, 4}));
  // A second sequence sharing the first block publishes only its own second block, whose
  // parent is the shared first one.
  const std::vector<int32_t> b = {1, 2, 9, 9, 7};
  bm.allocate(2, bm.match_prefix(b), 5);
  bm.publish(2, b, 5);
  ev = bm.take_events();
  ASSERT_EQ(ev.size(), 1u);
  const auto& second = std::get<BlockStored>(ev[0]);
  ASSERT_EQ(second.hashes.size(), 1u);
  EXPECT_EQ(second.parent, first.hashes[0]);
  EXPECT_EQ(second.token_ids, (std::vector<int32_t>{9, 9}));
  // Nothing is recorded while off.
  bm.set_record_events(false);
  bm.free(1);
  bm.free(2);
  const std::vector<int32_t> c = {8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
  bm.allocate(3, bm.match_prefix(c), 15);  // evicts cached blocks
  bm.publish(3, c, 15);
  EXPECT_TRUE(bm.take_events().empty());
}

}  // namespace
}  // namespace ps
