// Which rows the device sampler may draw, and which fall back to the host
// (sampling/device_sampling_rows.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sampling/device_sampling_rows.h"

namespace ps {
namespace {

std::string reason(const SamplingParams& p, int32_t generated = 5, bool constrained = false,
                   bool draft = false) {
  const char* r = host_sampling_reason(SamplingRowInput{&p, generated, constrained, draft});
  return r == nullptr ? "device" : r;
}

TEST(DeviceSamplingRows, PlainSamplingRunsOnTheDevice) {
  SamplingParams p;
  EXPECT_EQ(reason(p), "device");
  p.temperature = 0.0f;  // greedy
  EXPECT_EQ(reason(p), "device");
  p.temperature = 0.7f;
  p.top_k = 40;
  p.top_p = 0.9f;
  p.min_p = 0.05f;
  p.seed = 7;
  EXPECT_EQ(reason(p), "device");
  p.logprobs = 0;  // the chosen token's logprob comes back with the token
  EXPECT_EQ(reason(p), "device");
  p.stop_token_ids = {3};
  p.min_tokens = 5;  // reached: nothing is masked any more
  EXPECT_EQ(reason(p, 5), "device");
}

TEST(DeviceSamplingRows, EachHostOnlyFeatureSendsTheRowToTheHost) {
  SamplingParams p;
  p.presence_penalty = 0.5f;
  EXPECT_EQ(reason(p), "presence/frequency penalty");
  p = {};
  p.frequency_penalty = -0.5f;
  EXPECT_EQ(reason(p), "presence/frequency penalty");
  p = {};
  p.repetition_penalty = 1.1f;
  EXPECT_EQ(reason(p), "repetition penalty");
  p = {};
  p.logit_bias = {{5, -100.0f}};
  EXPECT_EQ(reason(p), "logit_bias");
  p = {};
  p.logprobs = 3;
  EXPECT_EQ(reason(p), "top-n logprobs");
  p = {};
  p.min_tokens = 6;
  EXPECT_EQ(reason(p, 5), "min_tokens");
  p = {};
  EXPECT_EQ(reason(p, 5, /*constrained=*/true), "grammar mask");
  EXPECT_EQ(reason(p, 5, false, /*draft=*/true), "speculative draft verification");
}

TEST(DeviceSamplingRows, SplitKeepsRowOrderOnBothSides) {
  SamplingParams plain, penalized, biased;
  penalized.repetition_penalty = 1.2f;
  biased.logit_bias = {{1, 2.0f}};
  const std::vector<SamplingRowInput> rows = {
      {&plain, 0, false, false},  {&penalized, 0, false, false}, {&plain, 0, false, false},
      {&biased, 0, false, false}, {&plain, 0, true, false},      {&plain, 3, false, false}};
  const SamplingRowSplit s = split_sampling_rows(rows);
  EXPECT_EQ(s.device_rows, (std::vector<int32_t>{0, 2, 5}));
  EXPECT_EQ(s.host_rows, (std::vector<int32_t>{1, 3, 4}));
  EXPECT_TRUE(split_sampling_rows({}).device_rows.empty());
  EXPECT_THROW(split_sampling_rows({SamplingRowInput{}}), std::invalid_argument);
}

}  // namespace
}  // namespace ps
