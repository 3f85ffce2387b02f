// The prefix cache of docs/architecture.md §4: hits, partial hits, misses, collisions, LRU eviction.
#include <gtest/gtest.h>

#include <vector>

#include "kvcache/block_manager.h"
#include "tests/iota_tokens.h"

namespace ps {
namespace {

using testing::iota_tokens;

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Runs a sequence to completion: allocate, compute everything, publish, free.
void run_and_finish(BlockManager& bm, int64_t seq, const std::vector<int32_t>& tokens) {
  const PrefixMatch m = bm.match_prefix(tokens);
  const auto n = static_cast<int32_t>(tokens.size());
  ASSERT_TRUE(bm.can_allocate(m, n));
  bm.allocate(seq, m, n);
  bm.check_integrity();
  bm.publish(seq, tokens, n);
  bm.check_integrity();
  bm.free(seq);
  bm.check_integrity();
}

int32_t matched_blocks(const BlockManager& bm, const std::vector<int32_t>& tokens) {
  return static_cast<int32_t>(bm.match_prefix(tokens).blocks.size());
}

TEST(PrefixCache, FullHitSharesBlocksAndCountsTokens) {
  BlockManager bm(16, 4, true);
  const auto prompt = iota_tokens(13);  // 3 full blocks + 1 token
  run_and_finish(bm, 1, prompt);
  EXPECT_EQ(bm.num_cached_blocks(), 3);
  EXPECT_EQ(bm.prefix_queries(), 13u);
  EXPECT_EQ(bm.prefix_hits(), 0u);

  const PrefixMatch m = bm.match_prefix(prompt);
  ASSERT_EQ(m.blocks.size(), 3u);
  EXPECT_EQ(m.num_tokens, 12);
  EXPECT_EQ(m.num_idle, 3);
  bm.allocate(2, m, 13);
  EXPECT_EQ(bm.num_cached_blocks(), 0);  // cached -> active
  EXPECT_EQ(bm.num_active_blocks(), 4);
  EXPECT_EQ(bm.prefix_queries(), 26u);
  EXPECT_EQ(bm.prefix_hits(), 12u);
  bm.check_integrity();
}

TEST(PrefixCache, NeverMatchesTheWholePrompt) {
  BlockManager bm(16, 4, true);
  const auto prompt = iota_tokens(12);  // exactly 3 full blocks
  run_and_finish(bm, 1, prompt);
  EXPECT_EQ(bm.num_cached_blocks(), 3);
  // The block with the last token must be computed again to get logits.
  EXPECT_EQ(matched_blocks(bm, prompt), 2);
  EXPECT_EQ(matched_blocks(bm, iota_tokens(4)), 0);
  EXPECT_EQ(matched_blocks(bm, iota_tokens(5)), 1);
}

TEST(PrefixCache, PartialHitStopsAtFirstDifferentBlock) {
  BlockManager bm(16, 4, true);
  run_and_finish(bm, 1, iota_tokens(13));
  auto other = iota_tokens(13);
  other[5] = 999;  // second block differs
  EXPECT_EQ(matched_blocks(bm, other), 1);
  // Same third block, but after a different second one: the chain is broken.
  auto tail_same = iota_tokens(13);
  tail_same[4] = 777;
  EXPECT_EQ(matched_blocks(bm, tail_same), 1);
}

TEST(PrefixCache, MissOnDifferentFirstBlock) {
  BlockManager bm(16, 4, true);
  run_and_finish(bm, 1, iota_tokens(13));
  auto other = iota_tokens(13);
  other[0] = -5;
  EXPECT_EQ(matched_blocks(bm, other), 0);
  EXPECT_EQ(matched_blocks(bm, iota_tokens(13, 1)), 0);
}

TEST(PrefixCache, ForcedHashCollisionIsNeverReused) {
  // Every block gets the same key: only the token and parent comparison tells them apart.
  BlockManager bm(32, 4, true, [](uint64_t, std::span<const int32_t>) { return uint64_t{42}; });
  const auto x = iota_tokens(4, 0), y = iota_tokens(4, 10), w = iota_tokens(4, 20);
  const std::vector<int32_t> tail = {7};
  run_and_finish(bm, 1, concat(concat(x, y), tail));
  EXPECT_EQ(bm.num_cached_blocks(), 2);

  // Different content under the same key: no hit.
  EXPECT_EQ(matched_blocks(bm, concat(concat(w, y), tail)), 0);
  // Same block content (y) after a different parent (w instead of x): no hit for y.
  run_and_finish(bm, 2, concat(concat(w, y), tail));
  EXPECT_EQ(bm.num_cached_blocks(), 4);  // colliding blocks coexist
  EXPECT_EQ(matched_blocks(bm, concat(concat(x, w), tail)), 1);

  // Each sequence still finds exactly its own chain.
  const PrefixMatch mx = bm.match_prefix(concat(concat(x, y), tail));
  const PrefixMatch mw = bm.match_prefix(concat(concat(w, y), tail));
  ASSERT_EQ(mx.blocks.size(), 2u);
  ASSERT_EQ(mw.blocks.size(), 2u);
  EXPECT_NE(mx.blocks[0], mw.blocks[0]);
  EXPECT_NE(mx.blocks[1], mw.blocks[1]);
  bm.check_integrity();
}

TEST(PrefixCache, ConcurrentDuplicateIsDeduplicatedOnPublish) {
  BlockManager bm(16, 4, true);
  const auto prompt = iota_tokens(9);
  // Both admitted before either published: no hit, two private copies.
  bm.allocate(1, bm.match_prefix(prompt), 9);
  bm.allocate(2, bm.match_prefix(prompt), 9);
  EXPECT_EQ(bm.num_active_blocks(), 6);
  bm.publish(1, prompt, 9);
  bm.publish(2, prompt, 9);
  bm.check_integrity();
  // Sequence 2 now holds sequence 1's copies; its own went back to the free list.
  EXPECT_EQ(bm.block_table(2)[0], bm.block_table(1)[0]);
  EXPECT_EQ(bm.block_table(2)[1], bm.block_table(1)[1]);
  EXPECT_NE(bm.block_table(2)[2], bm.block_table(1)[2]);
  EXPECT_EQ(bm.num_active_blocks(), 4);
  EXPECT_EQ(bm.num_free_blocks(), 12);
  bm.free(1);
  bm.free(2);
  EXPECT_EQ(bm.num_cached_blocks(), 2);
  bm.check_integrity();
}

TEST(PrefixCache, PublishIsIncrementalOverChunks) {
  BlockManager bm(16, 4, true);
  const auto prompt = iota_tokens(11);
  bm.allocate(1, bm.match_prefix(prompt), 6);
  bm.publish(1, prompt, 6);  // one full block
  bm.check_integrity();
  EXPECT_EQ(matched_blocks(bm, prompt), 1);
  ASSERT_TRUE(bm.append_slots(1, 11));
  bm.publish(1, prompt, 11);
  bm.check_integrity();
  EXPECT_EQ(matched_blocks(bm, prompt), 2);
}

TEST(PrefixCache, EvictsLeastRecentlyUsedTailFirst) {
  // 6 blocks of 4. A and B each leave 2 cached blocks; C then needs the pool.
  BlockManager bm(6, 4, true);
  const auto a = iota_tokens(9, 0), b = iota_tokens(9, 100);
  run_and_finish(bm, 1, a);
  run_and_finish(bm, 2, b);
  ASSERT_EQ(bm.num_cached_blocks(), 4);
  ASSERT_EQ(bm.num_free_blocks(), 2);

  // Free blocks go first; nothing evicted.
  bm.allocate(3, bm.match_prefix(iota_tokens(8, 500)), 8);
  EXPECT_EQ(matched_blocks(bm, a), 2);
  EXPECT_EQ(matched_blocks(bm, b), 2);
  // Then A's blocks (older), its tail before its head, then B's.
  ASSERT_TRUE(bm.append_slots(3, 12));
  EXPECT_EQ(matched_blocks(bm, a), 1);
  EXPECT_EQ(matched_blocks(bm, b), 2);
  ASSERT_TRUE(bm.append_slots(3, 16));
  EXPECT_EQ(matched_blocks(bm, a), 0);
  EXPECT_EQ(matched_blocks(bm, b), 2);
  ASSERT_TRUE(bm.append_slots(3, 20));
  EXPECT_EQ(matched_blocks(bm, b), 1);
  ASSERT_TRUE(bm.append_slots(3, 24));
  EXPECT_EQ(matched_blocks(bm, b), 0);
  EXPECT_EQ(bm.num_cached_blocks(), 0);
  EXPECT_FALSE(bm.append_slots(3, 25));
  bm.check_integrity();
}

TEST(PrefixCache, HitRefreshesRecency) {
  BlockManager bm(6, 4, true);
  const auto a = iota_tokens(9, 0), b = iota_tokens(9, 100);
  run_and_finish(bm, 1, a);
  run_and_finish(bm, 2, b);
  // Reusing A's prefix makes it the most recently used: B is now evicted first.
  run_and_finish(bm, 3, a);
  bm.allocate(4, bm.match_prefix(iota_tokens(12, 500)), 12);  // 2 free + 1 evicted
  EXPECT_EQ(matched_blocks(bm, b), 1);
  EXPECT_EQ(matched_blocks(bm, a), 2);
  bm.check_integrity();
}

TEST(PrefixCache, IdleMatchedBlocksDoNotCountAsAvailable) {
  BlockManager bm(4, 4, true);
  const auto a = iota_tokens(9);
  run_and_finish(bm, 1, a);  // 2 cached, 2 free
  const PrefixMatch m = bm.match_prefix(a);
  ASSERT_EQ(m.num_idle, 2);
  // 9 tokens: 2 matched + 1 fresh fits; 17 tokens would need 3 fresh with only 2 left.
  EXPECT_TRUE(bm.can_allocate(m, 9));
  EXPECT_TRUE(bm.can_allocate(m, 16));
  EXPECT_FALSE(bm.can_allocate(m, 17));
}

}  // namespace
}  // namespace ps
