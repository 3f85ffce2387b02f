// KV cache sizing on the GPU (model/kv_sizing.h) from made-up memory figures.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "model/kv_sizing.h"

namespace ps {
namespace {

constexpr int64_t GiB = 1ll << 30, MiB = 1ll << 20;

// An H200-like device: 140 GiB, 1 GiB held by the context and others; a 1.2 GiB model.
KvSizingInput h200() {
  KvSizingInput in;
  in.total_bytes = 140 * GiB;
  in.free_bytes = 139 * GiB;
  in.weight_bytes = 1200 * MiB;
  in.activation_bytes = 800 * MiB;
  in.bytes_per_block = 2 * 28 * 16 * 1024 * 2;  // Qwen3-0.6B, block 16, bf16: 1.75 MiB
  in.block_size = 16;
  return in;
}

std::string error_of(const KvSizingInput& in) {
  try {
    size_kv_cache(in);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(KvSizing, UtilizationIsAFractionOfTotalMinusEverythingElse) {
  KvSizingInput in = h200();
  const KvSizing s = size_kv_cache(in);
  const int64_t want = int64_t(0.9 * double(140 * GiB)) - 1 * GiB - 1200 * MiB - 800 * MiB;
  EXPECT_EQ(s.num_blocks, want / in.bytes_per_block);
  EXPECT_EQ(s.kv_bytes, int64_t{s.num_blocks} * in.bytes_per_block);
  EXPECT_EQ(s.max_tokens, int64_t{s.num_blocks} * 16);
  EXPECT_LE(s.kv_bytes, want);
  EXPECT_GT(s.kv_bytes + in.bytes_per_block, want);  // no whole block left unused
  EXPECT_NE(s.summary.find(std::to_string(s.num_blocks) + " blocks of 16 tokens"),
            std::string::npos)
      << s.summary;
  EXPECT_NE(s.summary.find(std::to_string(s.max_tokens) + " tokens at once"), std::string::npos);
  EXPECT_NE(s.summary.find("--gpu-memory-utilization 0.90"), std::string::npos) << s.summary;
}

TEST(KvSizing, OtherProcessesMemoryCountsAgainstTheFraction) {
  KvSizingInput in = h200();
  const int32_t alone = size_kv_cache(in).num_blocks;
  in.free_bytes -= 40 * GiB;  // another process holds 40 GiB
  const int32_t shared = size_kv_cache(in).num_blocks;
  EXPECT_NEAR(double(alone - shared) * double(in.bytes_per_block), double(40 * GiB),
              double(in.bytes_per_block));
}

TEST(KvSizing, HalfTheUtilizationIsHalfTheBudget) {
  KvSizingInput in = h200();
  in.free_bytes = in.total_bytes;  // nothing else on the device
  in.weight_bytes = in.activation_bytes = 0;
  in.gpu_memory_utilization = 0.5;
  EXPECT_EQ(size_kv_cache(in).num_blocks, (70 * GiB) / in.bytes_per_block);
}

TEST(KvSizing, ExplicitBytesAndBlocksWin) {
  KvSizingInput in = h200();
  in.kv_cache_memory = 10 * GiB;
  EXPECT_EQ(size_kv_cache(in).num_blocks, (10 * GiB) / in.bytes_per_block);
  EXPECT_NE(size_kv_cache(in).summary.find("--kv-cache-memory 10240.0 MiB"), std::string::npos);
  in.num_blocks = 100;  // --num-blocks beats --kv-cache-memory
  EXPECT_EQ(size_kv_cache(in).num_blocks, 100);
  EXPECT_EQ(size_kv_cache(in).kv_bytes, 100 * in.bytes_per_block);
}

TEST(KvSizing, ExplicitSizesThatDoNotFitAreRefused) {
  KvSizingInput in = h200();
  in.kv_cache_memory = 139 * GiB;  // free, but weights and buffers need 2 GiB of it
  const std::string e = error_of(in);
  EXPECT_NE(e.find("KV cache: --kv-cache-memory"), std::string::npos) << e;
  EXPECT_NE(e.find("does not fit"), std::string::npos) << e;
  in.kv_cache_memory = 0;
  in.num_blocks = 1 << 20;  // 1.75 TiB
  EXPECT_NE(error_of(in).find("--num-blocks 1048576"), std::string::npos) << error_of(in);
}

TEST(KvSizing, NoRoomForOneBlockNamesTheFlagToChange) {
  KvSizingInput in = h200();
  in.gpu_memory_utilization = 0.01;  // 1.4 GiB: less than what is already in use
  const std::string e = error_of(in);
  EXPECT_NE(e.find("leaves no room for one block"), std::string::npos) << e;
  EXPECT_NE(e.find("raise --gpu-memory-utilization"), std::string::npos) << e;
}

TEST(KvSizing, RejectsNonsense) {
  KvSizingInput in = h200();
  in.gpu_memory_utilization = 1.5;
  EXPECT_THROW(size_kv_cache(in), std::invalid_argument);
  in = h200();
  in.gpu_memory_utilization = 0;
  EXPECT_THROW(size_kv_cache(in), std::invalid_argument);
  in = h200();
  in.free_bytes = in.total_bytes + 1;
  EXPECT_THROW(size_kv_cache(in), std::invalid_argument);
  in = h200();
  in.bytes_per_block = 0;
  EXPECT_THROW(size_kv_cache(in), std::invalid_argument);
}

}  // namespace
}  // namespace ps
