// Prefix-cache namespaces (issue #22): the same tokens under two chain roots (two LoRA adapters)
// never share blocks, not even when every key collides; under one root they do.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kvcache/block_manager.h"
#include "tests/iota_tokens.h"

namespace ps {
namespace {

using testing::iota_tokens;

constexpr uint64_t kAdapterRoot = kRootBlockKey ^ 0x1234;

void run_and_finish(BlockManager& bm, int64_t seq, const std::vector<int32_t>& tokens,
                    uint64_t root) {
  const PrefixMatch m = bm.match_prefix(tokens, root);
  const auto n = static_cast<int32_t>(tokens.size());
  ASSERT_TRUE(bm.can_allocate(m, n));
  bm.allocate(seq, m, n);
  bm.publish(seq, tokens, n);
  bm.check_integrity();
  bm.free(seq);
  bm.check_integrity();
}

class PrefixRoot : public ::testing::TestWithParam<bool> {
 protected:
  // Param: every key collides (a constant hasher), so only the stored root can tell them apart.
  BlockManager bm{32, 4, true,
                  GetParam() ? BlockHasher([](uint64_t, std::span<const int32_t>) { return 7ull; })
                             : BlockHasher()};
};

TEST_P(PrefixRoot, HitsUnderItsOwnRootOnly) {
  const auto prompt = iota_tokens(13);  // 3 full blocks + 1
  run_and_finish(bm, 1, prompt, kAdapterRoot);
  EXPECT_EQ(bm.match_prefix(prompt, kAdapterRoot).blocks.size(), 3u);
  EXPECT_EQ(bm.match_prefix(prompt).blocks.size(), 0u);  // the base's root
  EXPECT_EQ(bm.match_prefix(prompt, kAdapterRoot ^ 1).blocks.size(), 0u);
}

TEST_P(PrefixRoot, SameTokensUnderTwoRootsKeepTwoCopies) {
  const auto prompt = iota_tokens(9);
  run_and_finish(bm, 1, prompt, kRootBlockKey);
  run_and_finish(bm, 2, prompt, kAdapterRoot);
  EXPECT_EQ(bm.num_cached_blocks(), 4);  // 2 full blocks each: publish did not deduplicate them
  const PrefixMatch base = bm.match_prefix(prompt);
  const PrefixMatch adapted = bm.match_prefix(prompt, kAdapterRoot);
  ASSERT_EQ(base.blocks.size(), 2u);
  ASSERT_EQ(adapted.blocks.size(), 2u);
  for (int32_t b : base.blocks) {
    EXPECT_EQ(std::count(adapted.blocks.begin(), adapted.blocks.end(), b), 0);
  }
  // Two live sequences, one per root, publishing the same content at once stay apart too.
  bm.allocate(3, base, 9);
  bm.allocate(4, adapted, 9);
  bm.publish(3, prompt, 9);
  bm.publish(4, prompt, 9);
  bm.check_integrity();
  EXPECT_NE(bm.block_table(3).front(), bm.block_table(4).front());
}

INSTANTIATE_TEST_SUITE_P(Hashers, PrefixRoot, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "colliding" : "default"; });

}  // namespace
}  // namespace ps
