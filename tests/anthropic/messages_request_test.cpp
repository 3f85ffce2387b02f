// The Messages body's translation into the chat route's OpenAI body: each field and block kind,
// and each mistake as an error naming the Messages field.
#include "anthropic/messages_request.h"

#include <gtest/gtest.h>

namespace ps::anthropic {
namespace {

using nlohmann::json;

json ok(const json& body, MessagesRoute route = MessagesRoute::kCreate) {
  auto r = translate_messages_request(body.dump(), route);
  if (auto* e = std::get_if<ApiError>(&r)) ADD_FAILURE() << e->message;
  return std::holds_alternative<json>(r) ? std::get<json>(r) : json();
}

ApiError err(const std::string& body, MessagesRoute route = MessagesRoute::kCreate) {
  auto r = translate_messages_request(body, route);
  EXPECT_TRUE(std::holds_alternative<ApiError>(r)) << std::get<json>(r).dump();
  return std::holds_alternative<ApiError>(r) ? std::get<ApiError>(r) : ApiError{};
}

json user(const std::string& text) {
  return {{"role", "user"}, {"content", text}};
}

TEST(MessagesRequest, PlainFieldsMapOntoChat) {
  json chat = ok({{"model", "m"},
                  {"max_tokens", 10},
                  {"messages", {user("hi")}},
                  {"temperature", 0.5},
                  {"top_p", 0.9},
                  {"top_k", 5},
                  {"stop_sequences", {"END"}},
                  {"stream", true},
                  {"metadata", {{"user_id", "u1"}}}});
  EXPECT_EQ(chat["model"], "m");
  EXPECT_EQ(chat["max_tokens"], 10);
  EXPECT_EQ(chat["messages"], json::array({user("hi")}));
  EXPECT_EQ(chat["temperature"], 0.5);
  EXPECT_EQ(chat["top_p"], 0.9);
  EXPECT_EQ(chat["top_k"], 5);
  EXPECT_EQ(chat["stop"], json::array({"END"}));
  EXPECT_EQ(chat["stream"], true);
  EXPECT_EQ(chat["user"], "u1");
}

TEST(MessagesRequest, SystemStringOrBlocksBecomesTheFirstMessage) {
  for (const json& system :
       {json("be brief"),
        json::array({{{"type", "text"}, {"text", "be"}}, {{"type", "text"}, {"text", "brief"}}})}) {
    json chat = ok({{"max_tokens", 1}, {"system", system}, {"messages", {user("hi")}}});
    ASSERT_EQ(chat["messages"].size(), 2u);
    EXPECT_EQ(chat["messages"][0]["role"], "system");
    EXPECT_EQ(chat["messages"][0]["content"], system.is_string() ? "be brief" : "be\nbrief");
  }
}

// Claude Code sends a system turn after the first user turn: a system message where it stands.
TEST(MessagesRequest, ASystemTurnInsideTheConversationStaysWhereItIs) {
  json chat = ok({{"max_tokens", 1},
                  {"messages",
                   {user("hi"),
                    {{"role", "system"},
                     {"content", json::array({{{"type", "text"}, {"text", "be brief"}}})}}}}});
  ASSERT_EQ(chat["messages"].size(), 2u);
  EXPECT_EQ(chat["messages"][1], json({{"role", "system"}, {"content", "be brief"}}));
}

TEST(MessagesRequest, ToolUseAndToolResultBecomeToolCallsAndToolMessages) {
  json body = {{"max_tokens", 1},
               {"messages",
                {user("weather?"),
                 {{"role", "assistant"},
                  {"content",
                   {{{"type", "thinking"}, {"thinking", "hmm"}, {"signature", ""}},
                    {{"type", "text"}, {"text", "Let me check."}},
                    {{"type", "tool_use"},
                     {"id", "toolu_1"},
                     {"name", "get_weather"},
                     {"input", {{"city", "Paris"}}}}}}},
                 {{"role", "user"},
                  {"content",
                   {{{"type", "tool_result"}, {"tool_use_id", "toolu_1"}, {"content", "20C"}},
                    {{"type", "text"}, {"text", "thanks"}}}}}}}};
  json m = ok(body)["messages"];
  ASSERT_EQ(m.size(), 4u) << m.dump();
  // The thinking block is dropped; text and the call stay on the assistant turn.
  EXPECT_EQ(m[1]["content"], json::array({{{"type", "text"}, {"text", "Let me check."}}}));
  EXPECT_EQ(m[1]["tool_calls"][0]["id"], "toolu_1");
  EXPECT_EQ(m[1]["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(m[1]["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            json({{"city", "Paris"}}));
  // The result answers the call before the user's own text.
  EXPECT_EQ(m[2], json({{"role", "tool"}, {"tool_call_id", "toolu_1"}, {"content", "20C"}}));
  EXPECT_EQ(m[3]["role"], "user");
}

TEST(MessagesRequest, ToolInputIsWrittenAsTemplatesWriteIt) {
  // Python's json.dumps spacing and the client's key order, not nlohmann's compact sorted dump.
  const std::string body = R"({"max_tokens":1,"messages":[{"role":"user","content":"x"},
      {"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f",
       "input":{"zeta":1,"alpha":["b",{"y":null,"x":"é"}]}}]}]})";
  auto r = translate_messages_request(body, MessagesRoute::kCreate);
  ASSERT_TRUE(std::holds_alternative<json>(r));
  EXPECT_EQ(std::get<json>(r)["messages"][1]["tool_calls"][0]["function"]["arguments"],
            "{\"zeta\": 1, \"alpha\": [\"b\", {\"y\": null, \"x\": \"\u00e9\"}]}");
}

TEST(MessagesRequest, ACallOnlyTurnHasNullContentAndAnErrorResultSaysSo) {
  json body = {
      {"max_tokens", 1},
      {"messages",
       {user("x"),
        {{"role", "assistant"},
         {"content",
          {{{"type", "tool_use"}, {"id", "a"}, {"name", "f"}, {"input", json::object()}}}}},
        {{"role", "user"},
         {"content",
          {{{"type", "tool_result"},
            {"tool_use_id", "a"},
            {"is_error", true},
            {"content", {{{"type", "text"}, {"text", "boom"}}}}}}}}}}};
  json m = ok(body)["messages"];
  ASSERT_EQ(m.size(), 3u) << m.dump();
  EXPECT_TRUE(m[1]["content"].is_null());
  EXPECT_EQ(m[2]["content"], "Error: boom");
}

TEST(MessagesRequest, ToolsAndToolChoice) {
  json tool = {{"name", "f"},
               {"description", "does f"},
               {"input_schema", {{"type", "object"}, {"properties", json::object()}}}};
  json body = {{"max_tokens", 1}, {"messages", {user("x")}}, {"tools", {tool}}};
  json chat = ok(body);
  EXPECT_EQ(
      chat["tools"][0],
      json({{"type", "function"},
            {"function",
             {{"name", "f"}, {"description", "does f"}, {"parameters", tool["input_schema"]}}}}));
  EXPECT_FALSE(chat.contains("tool_choice"));
  const std::vector<std::pair<json, json>> choices = {
      {{{"type", "auto"}}, "auto"},
      {{{"type", "any"}}, "required"},
      {{{"type", "none"}}, "none"},
      {{{"type", "tool"}, {"name", "f"}}, {{"type", "function"}, {"function", {{"name", "f"}}}}}};
  for (const auto& [choice, want] : choices) {
    body["tool_choice"] = choice;
    EXPECT_EQ(ok(body)["tool_choice"], want) << choice.dump();
  }
  body["tool_choice"] = {{"type", "auto"}, {"disable_parallel_tool_use", true}};
  EXPECT_EQ(ok(body)["parallel_tool_calls"], false);
}

TEST(MessagesRequest, ThinkingSetsTheTemplatesSwitch) {
  json body = {{"max_tokens", 1}, {"messages", {user("x")}}};
  body["thinking"] = {{"type", "enabled"}, {"budget_tokens", 1024}};
  EXPECT_EQ(ok(body)["chat_template_kwargs"], json({{"enable_thinking", true}}));
  body["thinking"] = {{"type", "disabled"}};
  EXPECT_EQ(ok(body)["chat_template_kwargs"], json({{"enable_thinking", false}}));
  // adaptive (Claude Code's default): the model decides, so the template keeps its default.
  body["thinking"] = {{"type", "adaptive"}};
  EXPECT_FALSE(ok(body).contains("chat_template_kwargs"));
  body["thinking"] = {{"type", "sometimes"}};
  EXPECT_EQ(err(body.dump()).param, "thinking.type");
}

TEST(MessagesRequest, CountTokensNeedsNoMaxTokensAndNeverStreams) {
  json chat = ok({{"messages", {user("x")}}, {"stream", true}}, MessagesRoute::kCountTokens);
  EXPECT_FALSE(chat.contains("max_tokens"));
  EXPECT_FALSE(chat.contains("stream"));
}

TEST(MessagesRequest, MistakesNameTheMessagesField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"messages":[{"role":"user","content":"x"}]})", "max_tokens"},
      {R"({"max_tokens":0,"messages":[{"role":"user","content":"x"}]})", "max_tokens"},
      {R"({"max_tokens":1})", "messages"},
      {R"({"max_tokens":1,"messages":[]})", "messages"},
      {R"({"max_tokens":1,"messages":[{"role":"tool","content":"x"}]})", "messages[0].role"},
      {R"({"max_tokens":1,"messages":[{"role":"system","content":[{"type":"image"}]}]})",
       "messages[0].content[0].type"},
      {R"({"max_tokens":1,"messages":[{"role":"user"}]})", "messages[0].content"},
      {R"({"max_tokens":1,"messages":[{"role":"user","content":[{"type":"image"}]}]})",
       "messages[0].content[0].type"},
      // tool_use only on assistant turns, tool_result only on user turns
      {R"({"max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_use","id":"a","name":"f"}]}]})",
       "messages[0].content[0].type"},
      {R"({"max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result"}]}]})",
       "messages[0].content[0].tool_use_id"},
      {R"({"max_tokens":1,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"bash_20250124","name":"bash"}]})",
       "tools[0].type"},
      {R"({"max_tokens":1,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f"}]})",
       "tools[0].input_schema"},
      {R"({"max_tokens":1,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"tool"}})",
       "tool_choice.name"},
      {R"({"max_tokens":1,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"some"}})",
       "tool_choice.type"},
      {R"({"max_tokens":1,"system":[{"type":"image"}],"messages":[{"role":"user","content":"x"}]})",
       "system[0].type"},
      {R"({"max_tokens":1,"messages":[{"role":"user","content":"x"}],"stop_sequences":"END"})",
       "stop_sequences"},
  };
  for (const auto& [body, param] : cases) {
    ApiError e = err(body);
    EXPECT_EQ(e.status, 400) << body;
    EXPECT_EQ(e.param, param) << body << " -> " << e.message;
    EXPECT_NE(e.message.find(param), std::string::npos) << e.message;
  }
  EXPECT_EQ(err("{\"max_tokens\":").status, 400);  // malformed JSON
  EXPECT_EQ(err("[1]").status, 400);               // not an object
}

}  // namespace
}  // namespace ps::anthropic
