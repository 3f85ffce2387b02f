// Responses answers: output items of a whole reply, the response object, usage, the assistant
// turn a stored conversation continues with, and the stream's event sequence as items open,
// change kind and close (reasoning -> message -> function calls), with sequence numbers, an
// incomplete end, a failure, an empty reply and reasoning summaries.
#include <gtest/gtest.h>

#include <algorithm>

#include "responses/response_events.h"
#include "responses/responses_output.h"
#include "tests/sse_events.h"

namespace ps::responses {
namespace {

using nlohmann::json;

// The events' data, in order (the framing checked by named_events).
std::vector<json> events_of(const std::string& sse) {
  std::vector<json> out;
  for (auto& [name, data] : ps::testing::named_events(sse)) out.push_back(std::move(data));
  return out;
}

std::vector<std::string> types_of(const std::vector<json>& events) {
  std::vector<std::string> t;
  for (const json& e : events) t.push_back(e["type"]);
  return t;
}

ResponseHeader header() {
  return {"resp_1", 1700000000, "tiny", json{{"tools", json::array()}, {"store", false}}, {}};
}

TEST(ResponsesOutput, WholeReplyItems) {
  ChoiceOutput reply;
  reply.text = "It is sunny.";
  reply.reasoning = "Think.";
  reply.tool_calls = {{"call_1", "get_weather", "{\"city\": \"Oslo\"}"}};
  reply.finish_reason = "tool_calls";
  json items = output_items(reply, /*summary=*/true);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0]["type"], "reasoning");
  EXPECT_EQ(items[0]["content"][0], json({{"type", "reasoning_text"}, {"text", "Think."}}));
  EXPECT_EQ(items[0]["summary"][0], json({{"type", "summary_text"}, {"text", "Think."}}));
  EXPECT_EQ(items[1]["type"], "message");
  EXPECT_EQ(items[1]["content"][0]["text"], "It is sunny.");
  EXPECT_EQ(items[1]["status"], "completed");
  EXPECT_EQ(items[2]["type"], "function_call");
  EXPECT_EQ(items[2]["call_id"], "call_1");
  EXPECT_EQ(items[2]["arguments"], "{\"city\": \"Oslo\"}");
  EXPECT_EQ(items[2]["id"].get<std::string>().rfind("fc_", 0), 0u);

  json namespaced = output_items(reply, false, {{"get_weather", "tools_ns"}});
  EXPECT_EQ(namespaced[2]["namespace"], "tools_ns");
  EXPECT_FALSE(items[2].contains("namespace"));

  ChoiceOutput calls_only;
  calls_only.tool_calls = {{"c", "f", "{}"}};
  EXPECT_EQ(output_items(calls_only, false).size(), 1u) << "no empty message beside calls";
  ChoiceOutput empty;
  empty.finish_reason = "length";
  json e = output_items(empty, false);
  ASSERT_EQ(e.size(), 1u) << "an empty reply is still a message";
  EXPECT_EQ(e[0]["status"], "incomplete");
}

TEST(ResponsesOutput, ResponseObjectAndUsage) {
  Usage u;
  u.prompt_tokens = 10;
  u.cached_tokens = 4;
  u.completion_tokens = 3;
  EXPECT_EQ(usage_body(u)["input_tokens"], 10);
  EXPECT_EQ(usage_body(u)["input_tokens_details"]["cached_tokens"], 4);
  EXPECT_EQ(usage_body(u)["total_tokens"], 13);
  json r = response_object(header(), "incomplete", json::array(), usage_body(u));
  EXPECT_EQ(r["id"], "resp_1");
  EXPECT_EQ(r["object"], "response");
  EXPECT_EQ(r["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(r["completed_at"], nullptr);
  EXPECT_EQ(r["store"], false) << "the echoed request fields are kept";
  ApiError err;
  err.message = "engine failed";
  json f = response_object(header(), "failed", json::array(), nullptr, err);
  EXPECT_EQ(f["error"], json({{"code", "server_error"}, {"message", "engine failed"}}));
  EXPECT_TRUE(
      response_object(header(), "completed", json::array(), nullptr)["completed_at"].is_number());
}

TEST(ResponsesOutput, AssistantTurn) {
  ChoiceOutput reply;
  reply.text = "hi";
  EXPECT_EQ(assistant_turn(reply),
            nlohmann::ordered_json::parse(R"({"role":"assistant","content":"hi"})"));
  reply.text = "";
  reply.tool_calls = {{"c1", "f", "{}"}};
  EXPECT_EQ(
      assistant_turn(reply).dump(),
      R"({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]})");
}

TEST(ResponseEvents, ReasoningThenTextThenCalls) {
  ResponseEvents s(header(), /*summary=*/false);
  std::string sse = s.start();
  ChunkDelta d1;
  d1.reasoning = "Hm";
  sse += s.delta(d1);
  ChunkDelta d2;
  d2.reasoning = "m.";
  d2.text = "Sun";
  sse += s.delta(d2);
  ChunkDelta d3;
  d3.text = "ny.";
  d3.tool_calls = {{0, "call_a", "f", "{\"x\""}};
  sse += s.delta(d3);
  ChunkDelta d4;
  d4.tool_calls = {{0, "", "", ": 1}"}, {1, "call_b", "g", "{}"}};
  sse += s.delta(d4);
  Usage u;
  u.prompt_tokens = 5;
  u.completion_tokens = 9;
  sse += s.finish("tool_calls", u);
  const auto events = events_of(sse);
  const std::vector<std::string> want = {"response.created",
                                         "response.in_progress",
                                         "response.output_item.added",
                                         "response.content_part.added",  // reasoning
                                         "response.reasoning_text.delta",
                                         "response.reasoning_text.delta",
                                         "response.reasoning_text.done",
                                         "response.content_part.done",
                                         "response.output_item.done",
                                         "response.output_item.added",
                                         "response.content_part.added",  // message
                                         "response.output_text.delta",
                                         "response.output_text.delta",
                                         "response.output_text.done",
                                         "response.content_part.done",
                                         "response.output_item.done",
                                         "response.output_item.added",  // call_a
                                         "response.function_call_arguments.delta",
                                         "response.function_call_arguments.delta",
                                         "response.function_call_arguments.done",
                                         "response.output_item.done",
                                         "response.output_item.added",  // call_b
                                         "response.function_call_arguments.delta",
                                         "response.function_call_arguments.done",
                                         "response.output_item.done",
                                         "response.completed"};
  EXPECT_EQ(types_of(events), want);
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i]["sequence_number"], i);
  EXPECT_EQ(events[0]["response"]["status"], "in_progress");
  EXPECT_EQ(events[2]["item"]["status"], "in_progress");
  EXPECT_EQ(events[6]["text"], "Hmm.");
  EXPECT_EQ(events[13]["text"], "Sunny.");
  EXPECT_EQ(events[19]["arguments"], "{\"x\": 1}");
  EXPECT_EQ(events[19]["name"], "f");
  EXPECT_EQ(events[17]["output_index"], 2);
  const json& done = events.back()["response"];
  EXPECT_EQ(done["status"], "completed");
  ASSERT_EQ(done["output"].size(), 4u);
  EXPECT_EQ(done["output"][0]["content"][0]["text"], "Hmm.");
  EXPECT_EQ(done["output"][2]["call_id"], "call_a");
  EXPECT_EQ(done["output"][3]["arguments"], "{}");
  EXPECT_EQ(done["usage"]["total_tokens"], 14);
  EXPECT_EQ(s.final_response(), done);
  EXPECT_EQ(s.reply().text, "Sunny.");
  EXPECT_EQ(s.reply().reasoning, "Hmm.");
  ASSERT_EQ(s.reply().tool_calls.size(), 2u);
  EXPECT_EQ(s.reply().tool_calls[0].arguments, "{\"x\": 1}");
  // Each item id of the added event is the one its deltas and done carry.
  EXPECT_EQ(events[4]["item_id"], events[2]["item"]["id"]);
  EXPECT_EQ(events[8]["item"]["id"], events[2]["item"]["id"]);
}

// The SSE text of calls made in order (the operands of + are evaluated in no set order).
template <typename... Calls>
std::vector<json> run(Calls&&... calls) {
  std::string sse;
  (sse.append(calls()), ...);
  return events_of(sse);
}

TEST(ResponseEvents, IncompleteEmptyFailedAndSummary) {
  ResponseEvents cut(header(), false);
  ChunkDelta d;
  d.text = "abc";
  auto events = run([&] { return cut.start(); }, [&] { return cut.delta(d); },
                    [&] { return cut.finish("length", Usage{}); });
  EXPECT_EQ(events.back()["type"], "response.incomplete");
  EXPECT_EQ(events.back()["response"]["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(events[events.size() - 2]["item"]["status"], "incomplete");

  ResponseEvents empty(header(), false);
  events = run([&] { return empty.start(); }, [&] { return empty.finish("stop", Usage{}); });
  EXPECT_EQ(events[2]["type"], "response.output_item.added");
  EXPECT_EQ(events.back()["response"]["output"][0]["content"][0]["text"], "");

  ResponseEvents failed(header(), false);
  ApiError e;
  e.message = "aborted";
  events = run([&] { return failed.start(); }, [&] { return failed.delta(d); },
               [&] { return failed.fail(e); });
  EXPECT_EQ(events.back()["type"], "response.failed");
  EXPECT_EQ(events.back()["response"]["status"], "failed");
  EXPECT_EQ(events.back()["response"]["error"]["message"], "aborted");
  EXPECT_EQ(events.back()["response"]["output"][0]["status"], "incomplete");

  ResponseEvents summary(header(), true);
  ChunkDelta r;
  r.reasoning = "why";
  events = run([&] { return summary.start(); }, [&] { return summary.delta(r); },
               [&] { return summary.finish("stop", Usage{}); });
  std::vector<std::string> types = types_of(events);
  EXPECT_NE(std::find(types.begin(), types.end(), "response.reasoning_summary_text.delta"),
            types.end());
  EXPECT_EQ(events.back()["response"]["output"][0]["summary"][0]["text"], "why");
}

}  // namespace
}  // namespace ps::responses
