// The exact JSON shapes OpenAI clients parse, and SSE framing.
#include "openai/openai_response.h"

#include <gtest/gtest.h>

#include "http/sse.h"

namespace ps {
namespace {

using nlohmann::json;

ResponseMeta meta(Endpoint e) {
  ResponseMeta m = new_response_meta(e, "tiny");
  m.created = 1700000000;
  return m;
}

// Token i is the single byte 'a' + i; token 99 is a lone UTF-8 continuation byte.
std::string bytes_of(int32_t id) {
  return id == 99 ? std::string("\x80") : std::string(1, 'a' + id);
}

TEST(OpenAiResponse, IdsCarryTheirPrefix) {
  EXPECT_EQ(new_response_meta(Endpoint::kChat, "m").id.rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(new_response_meta(Endpoint::kCompletion, "m").id.rfind("cmpl-", 0), 0u);
  EXPECT_NE(new_response_meta(Endpoint::kChat, "m").id, new_response_meta(Endpoint::kChat, "m").id);
  EXPECT_GT(new_response_meta(Endpoint::kChat, "m").created, 1600000000);
}

TEST(OpenAiResponse, ErrorBodyShape) {
  ApiError e = invalid_param("n", "'n' must be between 1 and 16, got 99");
  json j = error_json(e);
  EXPECT_EQ(j["error"]["message"], "'n' must be between 1 and 16, got 99");
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["param"], "n");
  EXPECT_TRUE(j["error"]["code"].is_null());
  ApiError no_param;
  no_param.message.push_back('x');  // (= "x" trips a GCC 12 -Wrestrict false positive here)
  EXPECT_TRUE(error_json(no_param)["error"]["param"].is_null());
}

TEST(OpenAiResponse, UsageCarriesCachedTokens) {
  json u = usage_json({10, 5, 8});
  EXPECT_EQ(u["prompt_tokens"], 10);
  EXPECT_EQ(u["completion_tokens"], 5);
  EXPECT_EQ(u["total_tokens"], 15);
  EXPECT_EQ(u["prompt_tokens_details"]["cached_tokens"], 8);
}

TEST(OpenAiResponse, ChatBody) {
  ChoiceOutput c{1, "hello", {}, "length"};
  json j = completion_body(meta(Endpoint::kChat), {c}, {3, 2, 0}, false, bytes_of);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "tiny");
  EXPECT_EQ(j["created"], 1700000000);
  ASSERT_EQ(j["choices"].size(), 1u);
  EXPECT_EQ(j["choices"][0]["index"], 1);
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "hello");
  // OpenAI's schema requires refusal; no reasoning parser, no reasoning_content.
  ASSERT_TRUE(j["choices"][0]["message"].contains("refusal"));
  EXPECT_TRUE(j["choices"][0]["message"]["refusal"].is_null());
  EXPECT_FALSE(j["choices"][0]["message"].contains("reasoning_content"));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(j["usage"]["total_tokens"], 5);
}

TEST(OpenAiResponse, ChatBodyWithReasoning) {
  ChoiceOutput c{0, "", {}, "stop"};
  c.reasoning_parsed = true;
  c.reasoning = "think";
  json j = completion_body(meta(Endpoint::kChat), {c}, {}, false, bytes_of);
  const json& msg = j["choices"][0]["message"];
  EXPECT_EQ(msg["reasoning_content"], "think");
  EXPECT_TRUE(msg["content"].is_null());  // empty answer: null, as vLLM
  EXPECT_TRUE(msg["refusal"].is_null());
  c.reasoning.reset();
  c.text = "answer";
  json k = completion_body(meta(Endpoint::kChat), {c}, {}, false, bytes_of);
  EXPECT_FALSE(k["choices"][0]["message"].contains("reasoning_content"));
  EXPECT_EQ(k["choices"][0]["message"]["content"], "answer");
}

TEST(OpenAiResponse, ChatStreamReasoningDelta) {
  ChunkDelta d;
  d.reasoning = "why";
  int64_t off = 0;
  json j = stream_chunk(meta(Endpoint::kChat), d, false, bytes_of, &off);
  EXPECT_EQ(j["choices"][0]["delta"], json({{"reasoning_content", "why"}}));
  d.text = "so";
  j = stream_chunk(meta(Endpoint::kChat), d, false, bytes_of, &off);
  EXPECT_EQ(j["choices"][0]["delta"], json({{"reasoning_content", "why"}, {"content", "so"}}));
}

TEST(OpenAiResponse, CompletionBodyWithLogprobs) {
  TokenLogprob a{0, -0.5f, {{0, -0.5f}, {1, -1.0f}}};
  TokenLogprob b{1, -0.25f, {}};
  ChoiceOutput c{0, "ab", {a, b}, "stop"};
  json j = completion_body(meta(Endpoint::kCompletion), {c}, {1, 2, 0}, true, bytes_of);
  EXPECT_EQ(j["object"], "text_completion");
  const json& ch = j["choices"][0];
  EXPECT_EQ(ch["text"], "ab");
  EXPECT_EQ(ch["logprobs"]["tokens"], json::array({"a", "b"}));
  EXPECT_EQ(ch["logprobs"]["token_logprobs"][1], -0.25);
  EXPECT_EQ(ch["logprobs"]["text_offset"], json::array({0, 1}));
  EXPECT_EQ(ch["logprobs"]["top_logprobs"][0]["b"], -1.0);
}

// Echo puts the prompt before the text and its tokens before the output's, the first with a
// null logprob; prompt_logprobs is vLLM's list (null, then id -> logprob, rank, decoded_token).
TEST(OpenAiResponse, CompletionEchoAndPromptLogprobs) {
  ChoiceOutput c{0, "c", {{2, -0.1f, {}}}, "length"};
  c.prompt.echo = true;
  c.prompt.with_logprobs = true;
  c.prompt.text = "ab";
  c.prompt.ids = {0, 1};
  c.prompt.logprobs = {{1, -2.0f, {{0, -0.5f}}, 3}};
  json j = completion_body(meta(Endpoint::kCompletion), {c}, {2, 1, 0}, true, bytes_of);
  const json& ch = j["choices"][0];
  EXPECT_EQ(ch["text"], "abc");
  EXPECT_EQ(ch["logprobs"]["tokens"], json::array({"a", "b", "c"}));
  EXPECT_EQ(ch["logprobs"]["token_logprobs"], json::parse("[null, -2.0, -0.10000000149011612]"));
  EXPECT_EQ(ch["logprobs"]["top_logprobs"][0], nullptr);
  EXPECT_EQ(ch["logprobs"]["top_logprobs"][1], json::parse(R"({"b": -2.0, "a": -0.5})"));
  EXPECT_EQ(ch["logprobs"]["text_offset"], json::array({0, 1, 2}));
  EXPECT_EQ(ch["prompt_logprobs"],
            json::parse(R"([null, {"0": {"logprob": -0.5, "rank": 1, "decoded_token": "a"},
                                   "1": {"logprob": -2.0, "rank": 3, "decoded_token": "b"}}])"));
  // Streamed, the choice's first chunk carries the same, and later ones only their tokens.
  std::vector<TokenLogprob> first = {{2, -0.1f, {}}};
  ChunkDelta d;
  d.text = "c";
  d.logprobs = &first;
  d.prompt = &c.prompt;
  int64_t off = 0;
  json a = stream_chunk(meta(Endpoint::kCompletion), d, false, bytes_of, &off);
  EXPECT_EQ(a["choices"][0]["text"], "abc");
  EXPECT_EQ(a["choices"][0]["logprobs"]["text_offset"], json::array({0, 1, 2}));
  EXPECT_EQ(a["choices"][0]["prompt_logprobs"], ch["prompt_logprobs"]);
  d.prompt = nullptr;
  json b = stream_chunk(meta(Endpoint::kCompletion), d, false, bytes_of, &off);
  EXPECT_EQ(b["choices"][0]["text"], "c");
  EXPECT_FALSE(b["choices"][0].contains("prompt_logprobs"));
  // Without echo a completion's text is its own; chat never echoes.
  c.prompt.echo = false;
  EXPECT_EQ(completion_body(meta(Endpoint::kCompletion), {c}, {2, 1, 0}, false,
                            bytes_of)["choices"][0]["text"],
            "c");
}

TEST(OpenAiResponse, ChatLogprobsCarryBytes) {
  TokenLogprob a{99, -std::numeric_limits<float>::infinity(), {{2, -0.1f}}};
  ChoiceOutput c{0, "", {a}, "stop"};
  json j = completion_body(meta(Endpoint::kChat), {c}, {}, true, bytes_of);
  const json& lp = j["choices"][0]["logprobs"]["content"][0];
  // refusal: null beside content, as OpenAI's schema for chat logprobs requires.
  ASSERT_TRUE(j["choices"][0]["logprobs"].contains("refusal"));
  EXPECT_TRUE(j["choices"][0]["logprobs"]["refusal"].is_null());
  EXPECT_EQ(lp["bytes"], json::array({0x80}));
  EXPECT_EQ(lp["logprob"], -9999.0);  // JSON has no -inf
  EXPECT_EQ(lp["top_logprobs"][0]["token"], "c");
  // The lone continuation byte must serialize (as U+FFFD), never throw.
  std::string text;
  ASSERT_NO_THROW(text = dump_json(j));
  EXPECT_NE(text.find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(OpenAiResponse, ChatStreamChunks) {
  ResponseMeta m = meta(Endpoint::kChat);
  ChunkDelta open;
  open.role_delta = true;
  int64_t off = 0;
  json first = stream_chunk(m, open, false, bytes_of, &off);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"],
            json({{"role", "assistant"}, {"content", ""}, {"refusal", nullptr}}));
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  EXPECT_FALSE(first.contains("usage"));

  ChunkDelta text;
  text.index = 2;
  text.text = "hi";
  json mid = stream_chunk(m, text, true, bytes_of, &off);
  EXPECT_EQ(mid["choices"][0]["index"], 2);
  EXPECT_EQ(mid["choices"][0]["delta"], json({{"content", "hi"}}));
  EXPECT_TRUE(mid.contains("usage"));
  EXPECT_TRUE(mid["usage"].is_null());

  ChunkDelta fin;
  fin.finish_reason = "stop";
  json last = stream_chunk(m, fin, false, bytes_of, &off);
  EXPECT_EQ(last["choices"][0]["delta"], json::object());
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(last["id"], first["id"]);
}

TEST(OpenAiResponse, CompletionStreamOffsetsContinueAcrossChunks) {
  ResponseMeta m = meta(Endpoint::kCompletion);
  std::vector<TokenLogprob> lps = {{0, -1.0f, {}}, {1, -1.0f, {}}};
  ChunkDelta d;
  d.text = "ab";
  d.logprobs = &lps;
  int64_t off = 0;
  json a = stream_chunk(m, d, false, bytes_of, &off);
  json b = stream_chunk(m, d, false, bytes_of, &off);
  EXPECT_EQ(a["choices"][0]["text"], "ab");
  EXPECT_EQ(a["choices"][0]["logprobs"]["text_offset"], json::array({0, 1}));
  EXPECT_EQ(b["choices"][0]["logprobs"]["text_offset"], json::array({2, 3}));
}

TEST(OpenAiResponse, UsageChunkHasNoChoices) {
  json u = usage_chunk(meta(Endpoint::kChat), {4, 3, 2});
  EXPECT_TRUE(u["choices"].is_array());
  EXPECT_TRUE(u["choices"].empty());
  EXPECT_EQ(u["usage"]["prompt_tokens_details"]["cached_tokens"], 2);
}

TEST(Sse, FramingIsOneDataLinePerEvent) {
  json j = {{"text", "line1\nline2"}};
  std::string e = sse_event(j);
  EXPECT_EQ(e.rfind("data: ", 0), 0u);
  EXPECT_EQ(e.substr(e.size() - 2), "\n\n");
  EXPECT_EQ(e.find('\n'), e.size() - 2);  // the newline inside the text is escaped
  EXPECT_EQ(json::parse(e.substr(6)), j);
  EXPECT_EQ(kSseDone, "data: [DONE]\n\n");
}

TEST(Sse, InvalidUtf8NeverThrows) {
  json j = {{"text", std::string("ok\xC3")}};  // a truncated two-byte sequence
  std::string s;
  ASSERT_NO_THROW(s = dump_json(j));
  EXPECT_NO_THROW(json::parse(s));
}

}  // namespace
}  // namespace ps

namespace ps {
namespace {

TEST(OpenAiResponse, ChatBodyWithToolCalls) {
  ChoiceOutput c;
  c.finish_reason = "tool_calls";
  c.tools_parsed = true;
  c.tool_calls = {{"call_1", "get_weather", "{\"city\": \"Paris\"}"}};
  json j = completion_body(meta(Endpoint::kChat), {c}, {}, false, bytes_of);
  const json& m = j["choices"][0]["message"];
  EXPECT_TRUE(m["content"].is_null()) << "a reply that only calls tools has null content";
  ASSERT_EQ(m["tool_calls"].size(), 1u);
  EXPECT_EQ(m["tool_calls"][0], json::parse(R"({"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}})"));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
  c.text = "checking";
  j = completion_body(meta(Endpoint::kChat), {c}, {}, false, bytes_of);
  EXPECT_EQ(j["choices"][0]["message"]["content"], "checking");
  c.tool_calls.clear();
  c.text.clear();
  j = completion_body(meta(Endpoint::kChat), {c}, {}, false, bytes_of);
  EXPECT_FALSE(j["choices"][0]["message"].contains("tool_calls")) << "no calls, no field";
}

TEST(OpenAiResponse, ChatStreamToolCallDeltas) {
  ChunkDelta d;
  d.tool_calls = {{0, "call_1", "f", ""}, {0, "", "", "{\"a\""}};
  int64_t off = 0;
  json j = stream_chunk(meta(Endpoint::kChat), d, false, bytes_of, &off);
  EXPECT_EQ(j["choices"][0]["delta"], json::parse(R"({"tool_calls": [
      {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}},
      {"index": 0, "function": {"arguments": "{\"a\""}}]})"));
}

}  // namespace
}  // namespace ps
