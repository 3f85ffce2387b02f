// KvPools: the sliding-window pool beside the full one, window release, holes in block tables,
// prefix matches cut to what both pools hold, and the integrity checks over both.
#include "kvcache/kv_pools.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "tests/iota_tokens.h"

namespace ps {
namespace {

using testing::iota_tokens;

KvPoolsConfig pools_config(int32_t full, int32_t sliding, int32_t window, bool caching = true) {
  KvPoolsConfig c;
  c.num_blocks = full;
  c.num_sliding_blocks = sliding;
  c.sliding_window = window;
  c.block_size = 4;
  c.enable_prefix_caching = caching;
  return c;
}

TEST(KvPools, RejectsASlidingPoolWithoutAWindow) {
  EXPECT_THROW(KvPools(pools_config(8, 8, 0)), std::invalid_argument);
  EXPECT_THROW(KvPools(pools_config(8, -1, 4)), std::invalid_argument);
  EXPECT_NO_THROW(KvPools(pools_config(8, 0, 0)));
}

TEST(KvPools, WithoutASlidingPoolItIsTheFullPoolAlone) {
  KvPools kv(pools_config(8, 0, 0));
  EXPECT_FALSE(kv.has_sliding_pool());
  EXPECT_EQ(kv.sliding(), nullptr);
  const auto tokens = iota_tokens(10);
  kv.allocate(1, kv.match_prefix(tokens, kRootBlockKey), 10);
  kv.publish(1, tokens, 10);
  EXPECT_EQ(kv.release_outside_window(1, 10), 0);
  EXPECT_EQ(kv.full().num_active_blocks(), 3);
  EXPECT_EQ(kv.max_slots(1), (3 + 5) * 4);
  kv.check_integrity();
}

// Window 6, blocks of 4: after n computed tokens the next query (position n) reads [n - 5, n],
// so block b goes once 4 * (b + 1) <= n - 5.
TEST(KvPools, GivesBackSlidingBlocksTheWindowHasPassed) {
  KvPools kv(pools_config(16, 16, 6));
  const auto tokens = iota_tokens(30);
  kv.allocate(1, kv.match_prefix(tokens, kRootBlockKey), 12);
  kv.publish(1, tokens, 12);
  EXPECT_EQ(kv.release_outside_window(1, 8), 0);  // next query 8 reads [3, 8]: block 0 needed
  EXPECT_EQ(kv.release_outside_window(1, 9), 1);  // next query 9 reads [4, 9]: block 0 is done
  ASSERT_TRUE(kv.append_slots(1, 30));
  kv.publish(1, tokens, 29);
  EXPECT_EQ(kv.release_outside_window(1, 29), 5);  // [24, 29]: blocks 1-5 go, 6 and 7 stay
  const std::vector<int32_t>& sliding = kv.sliding()->block_table(1);
  ASSERT_EQ(sliding.size(), 8u);  // holes keep every position's block index
  for (int b = 0; b < 6; ++b) EXPECT_EQ(sliding[b], -1) << b;
  EXPECT_GE(sliding[6], 0);
  EXPECT_GE(sliding[7], 0);
  EXPECT_EQ(kv.sliding()->num_held_blocks(1), 2);
  EXPECT_EQ(kv.full().num_held_blocks(1), 8);
  // Published blocks given back stay cached for later prefix hits; nothing is active twice.
  EXPECT_EQ(kv.sliding()->num_active_blocks(), 2);
  EXPECT_EQ(kv.sliding()->num_cached_blocks(), 6);
  kv.check_integrity();
  kv.free(1);
  EXPECT_EQ(kv.sliding()->num_active_blocks(), 0);
  EXPECT_EQ(kv.full().num_active_blocks(), 0);
  kv.check_integrity();
}

TEST(KvPools, WithPrefixCachingOnlyPublishedBlocksAreGivenBack) {
  KvPools kv(pools_config(16, 16, 2));
  const auto tokens = iota_tokens(20);
  kv.allocate(1, kv.match_prefix(tokens, kRootBlockKey), 20);
  kv.publish(1, tokens, 8);  // blocks 0 and 1 published
  // The window has passed blocks 0-3, but 2 and 3 are not in the prefix cache yet.
  EXPECT_EQ(kv.release_outside_window(1, 19), 2);
  kv.check_integrity();
  kv.publish(1, tokens, 19);
  EXPECT_EQ(kv.release_outside_window(1, 19), 2);
  kv.check_integrity();
}

TEST(KvPools, WithoutPrefixCachingBlocksGoStraightToTheFreeList) {
  KvPools kv(pools_config(16, 16, 2, /*caching=*/false));
  const auto tokens = iota_tokens(20);
  kv.allocate(1, kv.match_prefix(tokens, kRootBlockKey), 20);
  EXPECT_EQ(kv.release_outside_window(1, 19), 4);
  EXPECT_EQ(kv.sliding()->num_free_blocks(), 16 - 1);
  EXPECT_EQ(kv.sliding()->num_cached_blocks(), 0);
  kv.check_integrity();
}

TEST(KvPools, RoomIsTheScarcerPoolsAndAppendTakesBothOrNeither) {
  KvPools kv(pools_config(16, 3, 4));
  const auto tokens = iota_tokens(40);
  kv.allocate(1, kv.match_prefix(tokens, kRootBlockKey), 8);  // 2 blocks in each pool
  EXPECT_EQ(kv.max_slots(1), (2 + 1) * 4);                    // the sliding pool has 1 left
  EXPECT_FALSE(kv.append_slots(1, 16));                       // needs 2 more
  EXPECT_EQ(kv.full().num_active_blocks(), 2);                // nothing was taken
  EXPECT_EQ(kv.sliding()->num_active_blocks(), 2);
  kv.publish(1, tokens, 8);
  EXPECT_EQ(kv.release_outside_window(1, 8), 1);  // next query 8 reads [5, 8]
  EXPECT_TRUE(kv.append_slots(1, 16));
  EXPECT_EQ(kv.full().num_active_blocks(), 4);
  EXPECT_EQ(kv.sliding()->num_active_blocks(), 3);
  kv.check_integrity();
}

// A prefix hit needs, in the sliding pool, only the blocks its window reads (window 4, blocks of
// 4: a 16-token hit reads block 3), found by their full-pool twins; the head of the chain may be
// long evicted there. Once a block the window reads is gone, the hit is cut before it.
TEST(KvPools, APrefixHitNeedsOnlyTheWindowsBlocksInTheSlidingPool) {
  KvPools kv(pools_config(32, 4, 4));
  const auto tokens = iota_tokens(17);
  kv.allocate(1, kv.match_prefix(tokens, kRootBlockKey), 4);
  for (int32_t done = 4; done <= 12; done += 4) {
    kv.publish(1, tokens, done);
    kv.release_outside_window(1, done);
    ASSERT_TRUE(kv.append_slots(1, done + 4));
  }
  kv.publish(1, tokens, 16);
  kv.free(1);  // sliding LRU, oldest first: blocks 0, 1 (released early), 3, 2 (freed tail first)
  kv.check_integrity();
  KvMatch hit = kv.match_prefix(tokens, kRootBlockKey);
  EXPECT_EQ(hit.num_tokens(), 16);
  // Another sequence takes 2 sliding blocks: the chain's blocks 0 and 1 are evicted there.
  kv.allocate(2, kv.match_prefix(iota_tokens(8, 1000), kRootBlockKey), 8);
  hit = kv.match_prefix(tokens, kRootBlockKey);
  EXPECT_EQ(hit.num_tokens(), 16);
  ASSERT_EQ(hit.sliding.blocks.size(), 4u);
  EXPECT_EQ(hit.sliding.blocks[0], -1);  // holes where no query of the hit will read
  EXPECT_EQ(hit.sliding.blocks[2], -1);
  EXPECT_GE(hit.sliding.blocks[3], 0);
  EXPECT_EQ(hit.sliding.num_idle, 1);
  // Block 3 goes too: a 12-token hit reads block 2, still there.
  kv.allocate(3, kv.match_prefix(iota_tokens(4, 2000), kRootBlockKey), 4);
  hit = kv.match_prefix(tokens, kRootBlockKey);
  EXPECT_EQ(hit.num_tokens(), 12);
  EXPECT_EQ(hit.full.blocks.size(), 3u);
  // The hit is taken: the sequence shares block 2 and computes on from position 12.
  kv.free(2);
  kv.allocate(4, hit, 17);
  EXPECT_EQ(kv.sliding()->num_held_blocks(4), 3);  // block 2 and two fresh ones
  kv.publish(4, tokens, 16);
  kv.check_integrity();
  kv.free(3);
  kv.free(4);
  kv.check_integrity();
  EXPECT_EQ(kv.full().match_prefix(tokens, kRootBlockKey).num_tokens, 16);
}

TEST(KvPools, ACutMatchAllocatesAndContinuesTheChainFromWhereItWasCut) {
  KvPools kv(pools_config(32, 32, 64));  // a window past every token: no holes in the match
  const auto tokens = iota_tokens(17);
  kv.allocate(1, kv.match_prefix(tokens, kRootBlockKey), 17);
  kv.publish(1, tokens, 16);
  kv.free(1);
  KvMatch hit = kv.match_prefix(tokens, kRootBlockKey);
  ASSERT_EQ(hit.num_tokens(), 16);
  // Cut by hand to 2 blocks, as a scarcer pool would: the rest is computed again and published
  // under the same chain, so it dedups against the cached copies.
  hit.full = kv.full().shorten(hit.full, 2);
  hit.sliding = kv.sliding()->shorten(hit.sliding, 2);
  EXPECT_EQ(hit.full.num_idle, 2);
  EXPECT_EQ(hit.sliding.num_idle, 2);
  kv.allocate(2, hit, 17);
  kv.publish(2, tokens, 16);
  kv.check_integrity();
  EXPECT_EQ(kv.full().num_active_blocks(), 5);  // 4 shared cached blocks + the partial one
}

TEST(KvPools, AMatchCannotBeCutToEndOnAHole) {
  KvPools kv(pools_config(32, 32, 4));
  const auto tokens = iota_tokens(17);
  kv.allocate(1, kv.match_prefix(tokens, kRootBlockKey), 17);
  kv.publish(1, tokens, 16);
  kv.free(1);
  const KvMatch hit = kv.match_prefix(tokens, kRootBlockKey);
  ASSERT_EQ(hit.sliding.blocks.size(), 4u);  // holes, then block 3 (the 16-token hit's window)
  EXPECT_EQ(hit.sliding.blocks[1], -1);
  EXPECT_THROW(kv.sliding()->shorten(hit.sliding, 2), std::logic_error);
}

TEST(KvPools, IntegrityNoticesPoolsThatDisagree) {
  KvPools kv(pools_config(8, 8, 4));
  const auto tokens = iota_tokens(8);
  kv.allocate(1, kv.match_prefix(tokens, kRootBlockKey), 8);
  kv.check_integrity();
  kv.full().free(1);  // behind KvPools' back: the sliding pool still holds sequence 1
  EXPECT_THROW(kv.check_integrity(), std::logic_error);
}

TEST(KvPools, TruncateNeverReachesAHole) {
  KvPools kv(pools_config(16, 16, 2, /*caching=*/false));
  const auto tokens = iota_tokens(20);
  kv.allocate(1, kv.match_prefix(tokens, kRootBlockKey), 20);
  kv.release_outside_window(1, 19);
  EXPECT_NO_THROW(kv.truncate(1, 18));
  EXPECT_THROW(kv.truncate(1, 3), std::logic_error);
}

}  // namespace
}  // namespace ps
