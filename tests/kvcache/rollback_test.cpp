// BlockManager::truncate: rolling back the slots of rejected speculative draft tokens.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "kvcache/block_manager.h"
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

TEST(BlockRollback, FreesTheBlocksARejectedTailEmptied) {
  BlockManager bm(8, 4, true);
  bm.allocate(1, bm.match_prefix(iota_tokens(6)), 6);  // 2 blocks
  // A step drafts 5 tokens after the 6 committed ones: slots for 11 tokens, 3 blocks.
  ASSERT_TRUE(bm.append_slots(1, 11));
  expect_counts(bm, 5, 0, 3);
  const int32_t third = bm.block_table(1)[2];
  // One draft token accepted: 7 tokens computed. The third block held only rejected drafts.
  bm.truncate(1, 7);
  EXPECT_EQ(bm.block_table(1).size(), 2u);
  expect_counts(bm, 6, 0, 2);
  // The freed block is the next one handed out (the free list is a stack).
  ASSERT_TRUE(bm.append_slots(1, 9));
  EXPECT_EQ(bm.block_table(1)[2], third);
  expect_counts(bm, 5, 0, 3);
}

TEST(BlockRollback, KeepsAPartlyUsedBlockAndIsANoOpWithinIt) {
  BlockManager bm(8, 4, true);
  bm.allocate(1, bm.match_prefix(iota_tokens(5)), 5);  // 2 blocks, the second partly used
  ASSERT_TRUE(bm.append_slots(1, 8));                  // drafts fill the second block
  expect_counts(bm, 6, 0, 2);
  bm.truncate(1, 5);  // all drafts rejected: block 2 still holds token 5
  EXPECT_EQ(bm.block_table(1).size(), 2u);
  expect_counts(bm, 6, 0, 2);
}

TEST(BlockRollback, PublishedBlocksAreNeverRolledBack) {
  BlockManager bm(8, 4, true);
  const auto tokens = iota_tokens(9);
  bm.allocate(1, bm.match_prefix(tokens), 9);
  bm.publish(1, tokens, 8);  // two full computed blocks go to the prefix cache
  EXPECT_THROW(bm.truncate(1, 4), std::logic_error);  // would drop the second published block
  EXPECT_NO_THROW(bm.truncate(1, 8));                 // drops only the unpublished third
  EXPECT_EQ(bm.block_table(1).size(), 2u);
  EXPECT_NO_THROW(bm.check_integrity());
  EXPECT_THROW(bm.truncate(2, 0), std::logic_error);  // no table
}

TEST(BlockRollback, OnlyCommittedTokensReachThePrefixCache) {
  // Sequence 1 commits tokens 0..5, then drafts 6 7 (rejected: the model said 9).
  BlockManager bm(8, 4, true);
  auto committed = iota_tokens(6);
  bm.allocate(1, bm.match_prefix(committed), 6);
  ASSERT_TRUE(bm.append_slots(1, 8));
  bm.truncate(1, 6);
  committed.push_back(9);  // the token sampled in place of the first draft
  bm.publish(1, committed, 6);
  // The second block is not full of computed tokens yet: only the first is published.
  bm.free(1);
  expect_counts(bm, 7, 1, 0);
  // A prompt that starts with the rejected draft tokens finds only the first block.
  const std::vector<int32_t> drafted{0, 1, 2, 3, 4, 5, 6, 7, 1};
  EXPECT_EQ(bm.match_prefix(drafted).num_tokens, 4);
}

}  // namespace
}  // namespace ps
