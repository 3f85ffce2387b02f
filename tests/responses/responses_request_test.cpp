// Responses bodies into the chat body: input as a string and as items (messages with parts,
// function calls joining their assistant turn, tool outputs, reasoning dropped), function tools
// and their echo, tool_choice, text.format with the schema's key order kept, the echoed fields,
// the history joined by chat_body, and every refusal naming its field.
#include "responses/responses_request.h"

#include <gtest/gtest.h>

namespace ps::responses {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ResponsesRequest parse_ok(const std::string& body) {
  auto r = parse_responses_request(body);
  if (auto* e = std::get_if<ApiError>(&r)) ADD_FAILURE() << e->message;
  return std::get<ResponsesRequest>(r);
}

ApiError parse_error(const std::string& body) {
  auto r = parse_responses_request(body);
  EXPECT_TRUE(std::holds_alternative<ApiError>(r)) << body;
  return std::holds_alternative<ApiError>(r) ? std::get<ApiError>(r) : ApiError{};
}

TEST(ResponsesRequest, StringInputIsOneUserMessage) {
  auto r = parse_ok(R"({"model":"tiny","input":"hi","max_output_tokens":7,"temperature":0})");
  EXPECT_EQ(r.input_messages, ordered_json::parse(R"([{"role":"user","content":"hi"}])"));
  EXPECT_EQ(r.chat["max_completion_tokens"], 7);
  EXPECT_EQ(r.chat["temperature"], 0);
  EXPECT_EQ(r.chat["stream"], false);
  EXPECT_FALSE(r.store) << "stateless unless store: true";
  EXPECT_EQ(r.echo["max_output_tokens"], 7);
  EXPECT_EQ(r.echo["top_p"], 1.0) << "an unset sampling field echoes its default";
  EXPECT_EQ(r.echo["tool_choice"], "auto");
}

TEST(ResponsesRequest, ItemsBecomeChatTurns) {
  auto r = parse_ok(R"({"input":[
    {"role":"developer","content":"be brief"},
    {"type":"message","role":"user","content":[{"type":"input_text","text":"weather "},
                                               {"type":"input_text","text":"in Oslo?"}]},
    {"type":"reasoning","id":"rs_1","summary":[]},
    {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking."}]},
    {"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{\"city\": \"Oslo\"}"},
    {"type":"function_call","call_id":"c2","name":"get_time","arguments":"{}"},
    {"type":"function_call_output","call_id":"c1","output":"{\"t\": 3}"},
    {"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"noon"}]},
    {"type":"function_call","call_id":"c3","name":"get_weather","arguments":"{}"}]})");
  const ordered_json want = ordered_json::parse(R"([
    {"role":"developer","content":"be brief"},
    {"role":"user","content":"weather in Oslo?"},
    {"role":"assistant","content":"Checking.","tool_calls":[
      {"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Oslo\"}"}},
      {"id":"c2","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
    {"role":"tool","tool_call_id":"c1","content":"{\"t\": 3}"},
    {"role":"tool","tool_call_id":"c2","content":"noon"},
    {"role":"assistant","content":null,"tool_calls":[
      {"id":"c3","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}])");
  EXPECT_EQ(r.input_messages, want) << r.input_messages.dump(1);
}

TEST(ResponsesRequest, FunctionToolsKeepTheirSchemaOrderAndAreEchoed) {
  auto r = parse_ok(R"({"input":"x","tools":[{"type":"function","name":"f","description":"d",
    "parameters":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"}}},
    "strict":true}],"tool_choice":{"type":"function","name":"f"},"parallel_tool_calls":false})");
  EXPECT_EQ(
      r.chat["tools"].dump(),
      R"([{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"}}},"strict":true}}])");
  EXPECT_EQ(r.chat["tool_choice"],
            ordered_json::parse(R"({"type":"function","function":{"name":"f"}})"));
  EXPECT_EQ(r.chat["parallel_tool_calls"], false);
  EXPECT_EQ(r.echo["tools"][0]["name"], "f");
  EXPECT_EQ(r.echo["tools"][0]["strict"], true);
  EXPECT_EQ(r.echo["tool_choice"], json::parse(R"({"type":"function","name":"f"})"));
  EXPECT_EQ(r.echo["parallel_tool_calls"], false);
}

TEST(ResponsesRequest, NamespaceToolsAreFlattenedAndRemembered) {
  auto r = parse_ok(R"({"input":"x","tools":[{"type":"function","name":"a","parameters":{}},
    {"type":"namespace","name":"agents","description":"d","tools":[
      {"type":"function","name":"spawn","parameters":{"type":"object"}},
      {"type":"function","name":"close"}]}]})");
  ASSERT_EQ(r.chat["tools"].size(), 3u);
  EXPECT_EQ(r.chat["tools"][1]["function"]["name"], "spawn");
  EXPECT_EQ(r.chat["tools"][2]["function"]["name"], "close");
  EXPECT_EQ(r.namespaces,
            (std::map<std::string, std::string>{{"spawn", "agents"}, {"close", "agents"}}));
  ASSERT_EQ(r.echo["tools"].size(), 2u) << "the response lists the namespace as sent";
  EXPECT_EQ(r.echo["tools"][1]["type"], "namespace");
  ApiError e = parse_error(R"({"input":"x","tools":[{"type":"namespace","name":"n","tools":[
    {"type":"custom","name":"c"}]}]})");
  EXPECT_EQ(e.param, "tools[0].tools[0].type");
}

TEST(ResponsesRequest, TextFormatBecomesResponseFormat) {
  auto r = parse_ok(R"({"input":"x","text":{"format":{"type":"json_schema","name":"out",
    "schema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}}},"strict":true}}})");
  EXPECT_EQ(
      r.chat["response_format"].dump(),
      R"({"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}}},"strict":true}})");
  EXPECT_EQ(r.echo["text"]["format"]["name"], "out");
  auto j = parse_ok(R"({"input":"x","text":{"format":{"type":"json_object"}}})");
  EXPECT_EQ(j.chat["response_format"], ordered_json::parse(R"({"type":"json_object"})"));
}

TEST(ResponsesRequest, ReasoningStoreAndEchoedFields) {
  auto r = parse_ok(R"({"input":"x","reasoning":{"effort":"low","summary":"auto"},"store":true,
    "previous_response_id":"resp_1","metadata":{"k":"v"},"user":"u","instructions":"sys","stream":true})");
  EXPECT_EQ(r.chat["chat_template_kwargs"]["reasoning_effort"], "low");
  EXPECT_TRUE(r.summary);
  EXPECT_TRUE(r.store);
  EXPECT_TRUE(r.stream);
  EXPECT_EQ(r.previous_response_id, "resp_1");
  EXPECT_EQ(r.echo["reasoning"], json::parse(R"({"effort":"low","summary":"auto"})"));
  EXPECT_EQ(r.echo["metadata"], json::parse(R"({"k":"v"})"));
  EXPECT_EQ(r.echo["instructions"], "sys");
  EXPECT_EQ(r.echo["previous_response_id"], "resp_1");
  EXPECT_EQ(r.chat["user"], "u");
}

TEST(ResponsesRequest, ChatBodyIsInstructionsThenHistoryThenInput) {
  auto r = parse_ok(R"({"model":"m","input":"second","instructions":"sys"})");
  const ordered_json history = ordered_json::parse(
      R"([{"role":"user","content":"first"},{"role":"assistant","content":"reply"}])");
  const ordered_json chat = chat_body(r, history);
  EXPECT_EQ(chat["model"], "m");
  EXPECT_EQ(chat["messages"], ordered_json::parse(R"([{"role":"system","content":"sys"},
    {"role":"user","content":"first"},{"role":"assistant","content":"reply"},
    {"role":"user","content":"second"}])"));
}

TEST(ResponsesRequest, RefusalsNameTheField) {
  struct Case {
    const char* body;
    const char* param;
  };
  const Case cases[] = {
      {R"({"model":"m"})", "input"},
      {R"({"input":[]})", "input"},
      {R"({"input":5})", "input"},
      {R"({"input":[{"type":"item_reference","id":"x"}]})", "input[0].type"},
      {R"({"input":[{"type":"computer_call","id":"x"}]})", "input[0].type"},
      {R"({"input":[{"role":"tool","content":"x"}]})", "input[0].role"},
      {R"({"input":[{"role":"user"}]})", "input[0].content"},
      {R"({"input":[{"role":"user","content":[{"type":"input_image","image_url":"u"}]}]})",
       "input[0].content[0].type"},
      {R"({"input":[{"type":"function_call","name":"f","arguments":"{}"}]})", "input[0].call_id"},
      {R"({"input":[{"type":"function_call_output","call_id":"c"}]})", "input[0].output"},
      {R"({"input":"x","tools":[{"type":"web_search"}]})", "tools[0].type"},
      {R"({"input":"x","tools":[{"type":"function"}]})", "tools[0].name"},
      {R"({"input":"x","tool_choice":"sometimes"})", "tool_choice"},
      {R"({"input":"x","tool_choice":{"type":"mcp"}})", "tool_choice.type"},
      {R"({"input":"x","text":{"format":{"type":"yaml"}}})", "text.format.type"},
      {R"({"input":"x","text":{"format":{"type":"json_schema","name":"n"}}})",
       "text.format.schema"},
      {R"({"input":"x","max_output_tokens":0})", "max_output_tokens"},
      {R"({"input":"x","reasoning":{"summary":"short"}})", "reasoning.summary"},
      {R"({"input":"x","metadata":{"k":1}})", "metadata.k"},
      {R"({"input":"x","background":true})", "background"},
      {R"({"input":"x","conversation":"conv_1"})", "conversation"},
      {R"({"input":"x","truncation":"auto"})", "truncation"},
      {R"({"input":"x","instructions":7})", "instructions"},
  };
  for (const Case& c : cases) {
    ApiError e = parse_error(c.body);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body << ": " << e.message;
    EXPECT_NE(e.message.find(c.param), std::string::npos) << e.message;
  }
  EXPECT_EQ(parse_error("{\"input\":").param, "");
}

}  // namespace
}  // namespace ps::responses
