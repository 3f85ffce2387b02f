// Hostile request bodies (issue #8): each is a 4xx ApiError, never a throw or a crash, and the
// server limits (--max-tokens-limit) hold whatever the body says.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <variant>

#include "openai/json_fields.h"
#include "openai/openai_request.h"
#include "sampling/sampling_params.h"

namespace ps {
namespace {

RequestLimits limits(int32_t max_tokens_limit = 0) {
  RequestLimits l;
  l.vocab_size = 100;
  l.max_n = 4;
  l.max_tokens_limit = max_tokens_limit;
  return l;
}

std::variant<OpenAiRequest, ApiError> parse(const std::string& body, int32_t limit = 0) {
  return parse_openai_request(body, Endpoint::kCompletion, limits(limit));
}

ApiError refused(const std::string& body, int32_t limit = 0) {
  auto r = parse(body, limit);
  if (!std::holds_alternative<ApiError>(r)) {
    ADD_FAILURE() << "accepted a hostile body: " << body.substr(0, 200);
    return {};
  }
  ApiError e = std::get<ApiError>(r);
  EXPECT_GE(e.status, 400);
  EXPECT_LT(e.status, 500);
  EXPECT_FALSE(e.message.empty());
  return e;
}

TEST(RequestHostile, DuplicateKeysAreRefusedAtAnyLevel) {
  ApiError e = refused(R"({"prompt":"a","max_tokens":1,"max_tokens":4000})");
  EXPECT_NE(e.message.find("duplicate key 'max_tokens'"), std::string::npos) << e.message;
  refused(
      R"({"prompt":"a","stream":true,"stream_options":{"include_usage":true,"include_usage":false}})");
  // The same key in sibling objects is not a duplicate.
  auto ok = parse_openai_request(
      R"({"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]})",
      Endpoint::kChat, limits());
  EXPECT_TRUE(std::holds_alternative<OpenAiRequest>(ok));
}

TEST(RequestHostile, NestingPastTheLimitIsRefusedWithoutRecursingDeep) {
  std::string deep = "{\"prompt\":\"a\",\"x\":";
  for (int i = 0; i < 100000; ++i) deep += "[";
  ApiError e = refused(deep);  // unterminated too: the depth check must fire first
  EXPECT_NE(e.message.find("nests deeper"), std::string::npos) << e.message;
  std::string fine = "{\"prompt\":\"a\",\"user\":null,\"x\":";
  for (int i = 0; i < json_fields::kMaxJsonDepth - 2; ++i) fine += "[";
  for (int i = 0; i < json_fields::kMaxJsonDepth - 2; ++i) fine += "]";
  EXPECT_TRUE(std::holds_alternative<OpenAiRequest>(parse(fine + "}")));
}

TEST(RequestHostile, NonFiniteAndOverflowingNumbers) {
  refused(R"({"prompt":"a","temperature":NaN})");
  refused(R"({"prompt":"a","temperature":Infinity})");
  refused(R"({"prompt":"a","temperature":1e999})");
  refused(R"({"prompt":"a","top_p":-1e999})");
  // Positive as a double, zero as the float the sampler uses: the engine would refuse it.
  refused(R"({"prompt":"a","top_p":1e-300})");
  refused(R"({"prompt":"a","repetition_penalty":1e-300})");
  refused(R"({"prompt":"a","logit_bias":{"3":1e999}})");
  refused(R"({"prompt":"a","n":1e300})");
  refused(R"({"prompt":"a","max_tokens":18446744073709551616})");
  refused(R"({"prompt":"a","max_tokens":-1})");
  refused(R"({"prompt":"a","logprobs":2147483648})");
  refused(R"({"prompt":"a","min_tokens":-2147483649})");
}

TEST(RequestHostile, EmptyStopStringsAndBadPromptsAreRefused) {
  refused(R"({"prompt":"a","stop":["x",""]})");
  refused(R"({"prompt":"a","stop":""})");
  refused(R"({"prompt":"\ud800"})");
  refused("{\"prompt\":\"\xc3\x28\"}");
  refused(R"({"prompt":[[]]})");
}

TEST(RequestHostile, MaxTokensLimitRefusesAboveAndCapsTheDefault) {
  ApiError e = refused(R"({"prompt":"a","max_tokens":9})", 8);
  EXPECT_NE(e.message.find("--max-tokens-limit"), std::string::npos) << e.message;
  EXPECT_EQ(e.param, "max_tokens");
  e = refused(R"({"prompt":"a","max_completion_tokens":9})", 8);
  EXPECT_EQ(e.param, "max_completion_tokens");
  auto r = parse_openai_request(R"({"messages":[{"role":"user","content":"a"}]})", Endpoint::kChat,
                                limits(8));
  ASSERT_TRUE(std::holds_alternative<OpenAiRequest>(r));
  EXPECT_EQ(std::get<OpenAiRequest>(r).params.max_tokens, 8);
  EXPECT_FALSE(std::get<OpenAiRequest>(r).max_tokens_given);
  r = parse(R"({"prompt":"a","max_tokens":8})", 8);
  ASSERT_TRUE(std::holds_alternative<OpenAiRequest>(r));
  EXPECT_EQ(std::get<OpenAiRequest>(r).params.max_tokens, 8);
}

TEST(RequestHostile, AcceptedParamsPassTheEngineValidation) {
  auto r =
      parse(R"({"prompt":"a","max_tokens":5,"temperature":2,"top_p":1e-30,"top_k":100,"min_p":1,)"
            R"("presence_penalty":-2,"frequency_penalty":2,"repetition_penalty":2,"logprobs":20,)"
            R"("logit_bias":{"99":-100},"stop":["a","b"],"n":4,"seed":9223372036854775807})");
  ASSERT_TRUE(std::holds_alternative<OpenAiRequest>(r)) << std::get<ApiError>(r).message;
  SamplingParams p = std::get<OpenAiRequest>(r).params;
  p.n = 1;
  EXPECT_EQ(validate(p, 100), "");
}

}  // namespace
}  // namespace ps
