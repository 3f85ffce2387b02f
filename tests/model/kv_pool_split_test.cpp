// split_kv_pools (model/kv_pool_split.h) and check_step_plan's sliding-pool half: how the KV
// budget is shared between a model's full-attention and sliding-window layers, and what a plan
// for the two pools must carry.
#include "model/kv_pool_split.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "model/step_plan_check.h"

namespace ps {
namespace {

// Gemma 3 1B's pattern: 26 layers, every sixth global, window 512.
ModelConfig gemma3_1b_layers() {
  ModelConfig c;
  c.num_hidden_layers = 26;
  c.sliding_window = 512;
  for (int32_t l = 0; l < 26; ++l) {
    c.layer_types.push_back(l % 6 == 5 ? LayerType::full_attention : LayerType::sliding_attention);
  }
  return c;
}

TEST(KvPoolSplit, OneKindOfLayerKeepsOnePool) {
  ModelConfig dense;
  dense.num_hidden_layers = 4;
  EXPECT_EQ(split_kv_pools(dense, 1000, 16, 64, 2048).num_sliding_blocks, 0);
  EXPECT_EQ(split_kv_pools(dense, 1000, 16, 64, 2048).num_blocks, 1000);
  ModelConfig all_sliding = dense;
  all_sliding.sliding_window = 64;
  all_sliding.layer_types.assign(4, LayerType::sliding_attention);
  EXPECT_EQ(split_kv_pools(all_sliding, 1000, 16, 64, 2048).num_sliding_blocks, 0);
  EXPECT_EQ(split_kv_pools(gemma3_1b_layers(), 1000, 16, 64, 2048, /*split=*/false).num_blocks,
            1000);
}

TEST(KvPoolSplit, TheSlidingPoolHoldsEverySequencesWindowAndOneChunk) {
  // 64 sequences x (512 / 16 + 2) blocks + 2048 / 16 + 1 = 2305 blocks.
  const KvPoolSizes s = split_kv_pools(gemma3_1b_layers(), 100000, 16, 64, 2048);
  EXPECT_EQ(s.num_sliding_blocks, 2305);
  // The rest of the same bytes: (100000 * 26 - 2305 * 22) / 4 blocks of the 4 global layers.
  EXPECT_EQ(s.num_blocks, (100000 * 26 - 2305 * 22) / 4);
}

TEST(KvPoolSplit, ASmallBudgetNeverShortensTheFullPool) {
  const KvPoolSizes s = split_kv_pools(gemma3_1b_layers(), 600, 16, 64, 2048);
  EXPECT_EQ(s.num_sliding_blocks, 600);
  EXPECT_EQ(s.num_blocks, 600);
}

ModelConfig tiny_split_config() {
  ModelConfig c;
  c.num_hidden_layers = 2;
  c.vocab_size = 100;
  c.max_position_embeddings = 1000;
  c.sliding_window = 4;
  c.layer_types = {LayerType::sliding_attention, LayerType::full_attention};
  return c;
}

// One sequence decoding its 11th token (position 10) with blocks of 4: its window reads
// positions [7, 10], blocks 1 and 2; block 0 of the sliding table may be a hole.
StepPlan decode_step() {
  StepPlan p;
  p.seq_ids = {1};
  p.token_ids = {5};
  p.positions = {10};
  p.query_start = {0, 1};
  p.context_len = {11};
  p.max_blocks_per_seq = 3;
  p.block_tables = {0, 1, 2};
  p.slot_mapping = {2 * 4 + 2};
  p.sliding_block_tables = {-1, 3, 4};
  p.sliding_slot_mapping = {4 * 4 + 2};
  p.sample_indices = {0};
  return p;
}

TEST(StepPlanSlidingPool, AHoleOutsideEveryWindowIsAccepted) {
  EXPECT_NO_THROW(check_step_plan(decode_step(), tiny_split_config(), 8, 4, 8));
}

TEST(StepPlanSlidingPool, AHoleInsideAWindowIsRefused) {
  StepPlan p = decode_step();
  p.sliding_block_tables = {0, -1, 4};
  EXPECT_THROW(check_step_plan(p, tiny_split_config(), 8, 4, 8), std::invalid_argument);
}

TEST(StepPlanSlidingPool, SlotsMustAgreeWithTheSlidingTable) {
  StepPlan p = decode_step();
  p.sliding_slot_mapping = {3 * 4 + 2};
  EXPECT_THROW(check_step_plan(p, tiny_split_config(), 8, 4, 8), std::invalid_argument);
}

TEST(StepPlanSlidingPool, SlidingIdsAreBoundedByTheSlidingPool) {
  EXPECT_THROW(check_step_plan(decode_step(), tiny_split_config(), 8, 4, 4), std::invalid_argument);
}

TEST(StepPlanSlidingPool, TablesAndPoolMustComeTogether) {
  StepPlan p = decode_step();
  EXPECT_THROW(check_step_plan(p, tiny_split_config(), 8, 4, 0), std::invalid_argument);
  p.sliding_block_tables.clear();
  p.sliding_slot_mapping.clear();
  EXPECT_THROW(check_step_plan(p, tiny_split_config(), 8, 4, 8), std::invalid_argument);
  EXPECT_NO_THROW(check_step_plan(p, tiny_split_config(), 8, 4, 0));
}

}  // namespace
}  // namespace ps
