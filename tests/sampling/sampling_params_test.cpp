#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "sampling/sampling_params.h"

namespace ps {
namespace {

constexpr int32_t kVocab = 100;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct Case {
  const char* name;
  std::function<void(SamplingParams&)> set;
  const char* param;  // empty: valid
};

void expect_case(const Case& c) {
  SamplingParams p;
  c.set(p);
  std::string param = "untouched";
  std::string msg = validate(p, kVocab, &param);
  if (std::string(c.param).empty()) {
    EXPECT_EQ(msg, "") << c.name;
    EXPECT_EQ(param, "untouched") << c.name;
  } else {
    EXPECT_NE(msg, "") << c.name;
    EXPECT_EQ(param, c.param) << c.name;
    // The message names the field so a client can fix the request.
    EXPECT_NE(msg.find(c.param), std::string::npos) << c.name << ": " << msg;
  }
}

TEST(SamplingParamsTest, DefaultsAreValid) {
  SamplingParams p;
  EXPECT_EQ(validate(p, kVocab), "");
  EXPECT_FALSE(p.greedy());
  p.temperature = 0;
  EXPECT_TRUE(p.greedy());
}

TEST(SamplingParamsTest, EachFieldInAndOutOfRange) {
  const Case cases[] = {
      {"temperature 0", [](auto& p) { p.temperature = 0; }, ""},
      {"temperature 100", [](auto& p) { p.temperature = 100; }, ""},
      {"temperature -0.1", [](auto& p) { p.temperature = -0.1f; }, "temperature"},
      {"temperature 100.5", [](auto& p) { p.temperature = 100.5f; }, "temperature"},
      {"temperature NaN", [](auto& p) { p.temperature = kNaN; }, "temperature"},
      {"temperature Inf", [](auto& p) { p.temperature = kInf; }, "temperature"},
      {"top_p 1", [](auto& p) { p.top_p = 1; }, ""},
      {"top_p 0.01", [](auto& p) { p.top_p = 0.01f; }, ""},
      {"top_p 0", [](auto& p) { p.top_p = 0; }, "top_p"},
      {"top_p 1.01", [](auto& p) { p.top_p = 1.01f; }, "top_p"},
      {"top_p NaN", [](auto& p) { p.top_p = kNaN; }, "top_p"},
      {"top_k -1", [](auto& p) { p.top_k = -1; }, ""},
      {"top_k 0", [](auto& p) { p.top_k = 0; }, ""},
      {"top_k 1", [](auto& p) { p.top_k = 1; }, ""},
      {"top_k above vocab", [](auto& p) { p.top_k = 5000; }, ""},
      {"top_k -2", [](auto& p) { p.top_k = -2; }, "top_k"},
      {"min_p 0", [](auto& p) { p.min_p = 0; }, ""},
      {"min_p 1", [](auto& p) { p.min_p = 1; }, ""},
      {"min_p -0.01", [](auto& p) { p.min_p = -0.01f; }, "min_p"},
      {"min_p 1.5", [](auto& p) { p.min_p = 1.5f; }, "min_p"},
      {"min_p -Inf", [](auto& p) { p.min_p = -kInf; }, "min_p"},
      {"presence 2", [](auto& p) { p.presence_penalty = 2; }, ""},
      {"presence -2", [](auto& p) { p.presence_penalty = -2; }, ""},
      {"presence 2.1", [](auto& p) { p.presence_penalty = 2.1f; }, "presence_penalty"},
      {"presence NaN", [](auto& p) { p.presence_penalty = kNaN; }, "presence_penalty"},
      {"frequency -2.1", [](auto& p) { p.frequency_penalty = -2.1f; }, "frequency_penalty"},
      {"frequency Inf", [](auto& p) { p.frequency_penalty = kInf; }, "frequency_penalty"},
      {"repetition 2", [](auto& p) { p.repetition_penalty = 2; }, ""},
      {"repetition 0.5", [](auto& p) { p.repetition_penalty = 0.5f; }, ""},
      {"repetition 0", [](auto& p) { p.repetition_penalty = 0; }, "repetition_penalty"},
      {"repetition 2.5", [](auto& p) { p.repetition_penalty = 2.5f; }, "repetition_penalty"},
      {"repetition NaN", [](auto& p) { p.repetition_penalty = kNaN; }, "repetition_penalty"},
      {"max_tokens 1", [](auto& p) { p.max_tokens = 1; }, ""},
      {"max_tokens 0 (scores the prompt)", [](auto& p) { p.max_tokens = 0; }, ""},
      {"max_tokens -5", [](auto& p) { p.max_tokens = -5; }, "max_tokens"},
      {"min_tokens = max", [](auto& p) { p.min_tokens = p.max_tokens; }, ""},
      {"min_tokens > max", [](auto& p) { p.min_tokens = p.max_tokens + 1; }, "min_tokens"},
      {"min_tokens -1", [](auto& p) { p.min_tokens = -1; }, "min_tokens"},
      {"n 16", [](auto& p) { p.n = 16; }, ""},
      {"n 0", [](auto& p) { p.n = 0; }, "n"},
      {"n 17", [](auto& p) { p.n = 17; }, "n"},
      {"logprobs -1", [](auto& p) { p.logprobs = -1; }, ""},
      {"logprobs 0", [](auto& p) { p.logprobs = 0; }, ""},
      {"logprobs 20", [](auto& p) { p.logprobs = 20; }, ""},
      {"logprobs 21", [](auto& p) { p.logprobs = 21; }, "logprobs"},
      {"logprobs -2", [](auto& p) { p.logprobs = -2; }, "logprobs"},
      {"prompt_logprobs 0", [](auto& p) { p.prompt_logprobs = 0; }, ""},
      {"prompt_logprobs 20", [](auto& p) { p.prompt_logprobs = 20; }, ""},
      {"prompt_logprobs 21", [](auto& p) { p.prompt_logprobs = 21; }, "prompt_logprobs"},
      {"prompt_logprobs -2", [](auto& p) { p.prompt_logprobs = -2; }, "prompt_logprobs"},
      {"stop 16", [](auto& p) { p.stop.assign(16, "x"); }, ""},
      {"stop 17", [](auto& p) { p.stop.assign(17, "x"); }, "stop"},
      {"stop empty string",
       [](auto& p) {
         p.stop = {"ok", ""};
       },
       "stop"},
      {"stop not utf8", [](auto& p) { p.stop = {"\xE4\xB8"}; }, "stop"},
      {"stop utf8",
       [](auto& p) {
         p.stop = {"\xE4\xB8\xAD", "\xF0\x9F\x98\x80"};
       },
       ""},
      {"stop_token_ids ok",
       [](auto& p) {
         p.stop_token_ids = {0, kVocab - 1};
       },
       ""},
      {"stop_token_ids = vocab", [](auto& p) { p.stop_token_ids = {kVocab}; }, "stop_token_ids"},
      {"stop_token_ids -1", [](auto& p) { p.stop_token_ids = {-1}; }, "stop_token_ids"},
      {"logit_bias ok",
       [](auto& p) {
         p.logit_bias = {{0, -100}, {kVocab - 1, 100}};
       },
       ""},
      {"logit_bias id",
       [](auto& p) {
         p.logit_bias = {{kVocab, 1}};
       },
       "logit_bias"},
      {"logit_bias -1",
       [](auto& p) {
         p.logit_bias = {{-1, 1}};
       },
       "logit_bias"},
      {"logit_bias 101",
       [](auto& p) {
         p.logit_bias = {{3, 101}};
       },
       "logit_bias"},
      {"logit_bias NaN",
       [](auto& p) {
         p.logit_bias = {{3, kNaN}};
       },
       "logit_bias"},
      {"logit_bias -Inf",
       [](auto& p) {
         p.logit_bias = {{3, -kInf}};
       },
       "logit_bias"},
  };
  for (const Case& c : cases) expect_case(c);
}

TEST(SamplingParamsTest, MessageStatesTheRangeAndTheValue) {
  SamplingParams p;
  p.top_p = 1.5f;
  std::string msg = validate(p, kVocab);
  EXPECT_NE(msg.find("(0, 1]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1.5"), std::string::npos) << msg;
}

TEST(SamplingParamsTest, NullParamPointerIsAllowed) {
  SamplingParams p;
  p.n = 0;
  EXPECT_NE(validate(p, kVocab, nullptr), "");
}

}  // namespace
}  // namespace ps
