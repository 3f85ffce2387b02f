// BlockManager: pool, block tables, reference counts and the integrity check.
#include "kvcache/block_manager.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "tests/iota_tokens.h"

namespace ps {
namespace {

using testing::iota_tokens;

void expect_counts(const BlockManager& bm, int32_t free, int32_t cached, int32_t active) {
  EXPECT_EQ(bm.num_free_blocks(), free);
  EXPECT_EQ(bm.num_cached_blocks(), cached);
  EXPECT_EQ(bm.num_active_blocks(), active);
  EXPECT_NO_THROW(bm.check_integrity());
}

TEST(BlockManager, RejectsBadSizes) {
  EXPECT_THROW(BlockManager(0, 16, true), std::invalid_argument);
  EXPECT_THROW(BlockManager(8, 0, true), std::invalid_argument);
}

TEST(BlockManager, StartsAllFree) {
  BlockManager bm(8, 4, true);
  EXPECT_EQ(bm.num_blocks(), 8);
  EXPECT_EQ(bm.block_size(), 4);
  expect_counts(bm, 8, 0, 0);
  EXPECT_TRUE(bm.block_table(1).empty());
}

TEST(BlockManager, AllocateAppendFree) {
  BlockManager bm(8, 4, true);
  const auto tokens = iota_tokens(10);
  const PrefixMatch miss = bm.match_prefix(tokens);
  EXPECT_TRUE(miss.blocks.empty());
  ASSERT_TRUE(bm.can_allocate(miss, 10));
  bm.allocate(1, miss, 10);
  EXPECT_EQ(bm.block_table(1).size(), 3u);
  expect_counts(bm, 5, 0, 3);

  // Slots 10 and 11 are in the third block: no new block.
  EXPECT_EQ(bm.blocks_needed(1, 12), 0);
  EXPECT_TRUE(bm.append_slots(1, 12));
  expect_counts(bm, 5, 0, 3);
  EXPECT_EQ(bm.blocks_needed(1, 13), 1);
  EXPECT_TRUE(bm.append_slots(1, 13));
  expect_counts(bm, 4, 0, 4);

  // Nothing published: every block goes back to the free list.
  bm.free(1);
  expect_counts(bm, 8, 0, 0);
  EXPECT_FALSE(bm.has_table(1));
  bm.free(1);  // a second release is a no-op
  expect_counts(bm, 8, 0, 0);
}

TEST(BlockManager, AppendFailsWithoutChangingAnything) {
  BlockManager bm(4, 4, true);
  bm.allocate(1, bm.match_prefix(iota_tokens(8)), 8);
  bm.allocate(2, bm.match_prefix(iota_tokens(8, 100)), 8);
  expect_counts(bm, 0, 0, 4);
  const auto before = bm.block_table(1);
  EXPECT_FALSE(bm.append_slots(1, 9));
  EXPECT_EQ(bm.block_table(1), before);
  expect_counts(bm, 0, 0, 4);
  EXPECT_FALSE(bm.can_allocate(bm.match_prefix(iota_tokens(3, 500)), 3));
}

TEST(BlockManager, BlockIdsAreDistinctAndInRange) {
  BlockManager bm(6, 2, true);
  bm.allocate(1, bm.match_prefix(iota_tokens(5)), 5);
  bm.allocate(2, bm.match_prefix(iota_tokens(6, 50)), 6);
  std::vector<int> seen(6, 0);
  for (int64_t seq : {1, 2}) {
    for (int32_t id : bm.block_table(seq)) {
      ASSERT_GE(id, 0);
      ASSERT_LT(id, 6);
      EXPECT_EQ(seen[id]++, 0) << "block " << id << " handed out twice";
    }
  }
  expect_counts(bm, 0, 0, 6);
}

TEST(BlockManager, MisuseThrowsLogicError) {
  BlockManager bm(2, 4, true);
  bm.allocate(1, bm.match_prefix(iota_tokens(4)), 4);
  EXPECT_THROW(bm.allocate(1, bm.match_prefix(iota_tokens(4)), 4), std::logic_error);
  EXPECT_THROW(bm.append_slots(7, 4), std::logic_error);
  EXPECT_THROW(bm.publish(7, iota_tokens(4), 4), std::logic_error);
  // Publishing more computed tokens than the table can hold is a caller bug.
  EXPECT_THROW(bm.publish(1, iota_tokens(8), 8), std::logic_error);
  EXPECT_THROW(bm.allocate(2, bm.match_prefix(iota_tokens(12, 40)), 12), std::logic_error);
  EXPECT_NO_THROW(bm.check_integrity());
}

TEST(BlockManager, SharedBlocksAreRefCounted) {
  BlockManager bm(8, 4, true);
  const auto tokens = iota_tokens(9);
  bm.allocate(1, bm.match_prefix(tokens), 9);
  bm.publish(1, tokens, 9);  // blocks 0..1 full and computed
  const auto a = bm.block_table(1);

  const PrefixMatch hit = bm.match_prefix(tokens);
  ASSERT_EQ(hit.blocks.size(), 2u);
  EXPECT_EQ(hit.num_idle, 0);  // held by sequence 1
  bm.allocate(2, hit, 9);
  const auto b = bm.block_table(2);
  EXPECT_EQ(b[0], a[0]);
  EXPECT_EQ(b[1], a[1]);
  EXPECT_NE(b[2], a[2]);  // partial blocks are never shared
  expect_counts(bm, 4, 0, 4);

  bm.free(1);  // shared blocks stay active for sequence 2; a's partial block is freed
  expect_counts(bm, 5, 0, 3);
  bm.free(2);
  expect_counts(bm, 6, 2, 0);
}

TEST(BlockManager, PrefixCachingOffNeverShares) {
  BlockManager bm(8, 4, false);
  const auto tokens = iota_tokens(9);
  bm.allocate(1, bm.match_prefix(tokens), 9);
  bm.publish(1, tokens, 9);
  bm.free(1);
  expect_counts(bm, 8, 0, 0);
  EXPECT_TRUE(bm.match_prefix(tokens).blocks.empty());
  bm.allocate(2, bm.match_prefix(tokens), 9);
  EXPECT_EQ(bm.prefix_queries(), 0u);
  EXPECT_EQ(bm.prefix_hits(), 0u);
  expect_counts(bm, 5, 0, 3);
}

}  // namespace
}  // namespace ps
