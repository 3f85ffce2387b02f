// tools / tool_choice / response_format / structured_outputs: what is accepted, and every
// mistake a 400 naming its field.
#include "openai/structured_request.h"

#include <gtest/gtest.h>

#include "openai/openai_request.h"

namespace ps {
namespace {

std::variant<OpenAiRequest, ApiError> parse(const std::string& extra,
                                            Endpoint e = Endpoint::kChat) {
  RequestLimits l;
  l.vocab_size = 100;
  std::string body = e == Endpoint::kChat ? R"({"messages":[{"role":"user","content":"hi"}])"
                                          : R"({"prompt":"hi")";
  if (!extra.empty()) body += "," + extra;
  return parse_openai_request(body + "}", e, l);
}

OpenAiRequest ok(const std::string& extra, Endpoint e = Endpoint::kChat) {
  auto r = parse(extra, e);
  if (auto* err = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << extra << ": " << err->message;
    return {};
  }
  return std::get<OpenAiRequest>(r);
}

ApiError bad(const std::string& extra, Endpoint e = Endpoint::kChat) {
  auto r = parse(extra, e);
  if (!std::holds_alternative<ApiError>(r)) {
    ADD_FAILURE() << "accepted: " << extra;
    return {};
  }
  return std::get<ApiError>(r);
}

const char* kWeather =
    R"("tools":[{"type":"function","function":{"name":"get_weather","description":"d",
    "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
    {"type":"function","function":{"name":"now"}}])";

TEST(ToolRequest, ToolsDefaultToAutoAndReachTheTemplate) {
  OpenAiRequest r = ok(kWeather);
  ASSERT_EQ(r.tools.functions.size(), 2u);
  EXPECT_EQ(r.tools.choice, ToolChoice::kAuto);
  EXPECT_TRUE(r.tools.active());
  EXPECT_EQ(r.tools.functions[0].name, "get_weather");
  EXPECT_EQ(r.tools.functions[0].parameters["required"][0], "city");
  EXPECT_EQ(r.tools.functions[1].parameters, nlohmann::ordered_json({{"type", "object"}}))
      << "a function without parameters takes an object";
  ASSERT_TRUE(r.chat.tools.is_array());
  EXPECT_EQ(r.chat.tools.size(), 2u);
  EXPECT_EQ(r.chat.tools[0]["function"]["description"], "d") << "as sent, for the template";
  EXPECT_TRUE(r.tools.parallel);
}

TEST(ToolRequest, ToolChoiceForms) {
  std::string tools = kWeather;
  EXPECT_EQ(ok(tools + R"(,"tool_choice":"none")").tools.choice, ToolChoice::kNone);
  EXPECT_FALSE(ok(tools + R"(,"tool_choice":"none")").tools.active());
  EXPECT_FALSE(ok(tools + R"(,"tool_choice":"none")").chat.tools.is_null())
      << "tools are still shown to the template for none, as vLLM does";
  EXPECT_EQ(ok(tools + R"(,"tool_choice":"required")").tools.choice, ToolChoice::kRequired);
  OpenAiRequest named =
      ok(tools + R"(,"tool_choice":{"type":"function","function":{"name":"now"}})");
  EXPECT_EQ(named.tools.choice, ToolChoice::kNamed);
  EXPECT_EQ(named.tools.named, "now");
  EXPECT_FALSE(ok(tools + R"(,"parallel_tool_calls":false)").tools.parallel);
  EXPECT_EQ(ok(R"("tool_choice":"none")").tools.choice, ToolChoice::kNone);
  EXPECT_FALSE(ok(R"("tools":[])").tools.active()) << "an empty list is no tools";
}

TEST(ToolRequest, MistakesNameTheirField) {
  std::string tools = kWeather;
  struct Case {
    std::string extra, param;
  } cases[] = {
      {R"("tools":{})", "tools"},
      {R"("tools":[5])", "tools[0]"},
      {R"("tools":[{"type":"code","function":{"name":"f"}}])", "tools[0].type"},
      {R"("tools":[{"type":"function","function":{}}])", "tools[0].function.name"},
      {R"("tools":[{"type":"function","function":{"name":"a b"}}])", "tools[0].function.name"},
      {R"("tools":[{"type":"function","function":{"name":"f","parameters":[]}}])",
       "tools[0].function.parameters"},
      {R"("tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"f"}}])",
       "tools"},
      {R"("tool_choice":"auto")", "tool_choice"},
      {R"("tool_choice":"required")", "tool_choice"},
      {tools + R"(,"tool_choice":"sometimes")", "tool_choice"},
      {tools + R"(,"tool_choice":{"type":"function","function":{"name":"nope"}})", "tool_choice"},
      {tools + R"(,"tool_choice":{"type":"function"})", "tool_choice"},
      {tools + R"(,"tool_choice":3)", "tool_choice"},
      {R"("functions":[{"name":"f"}])", "functions"},
      {R"("function_call":"auto")", "function_call"},
      {tools + R"(,"response_format":{"type":"json_object"})", "response_format"},
  };
  for (const Case& c : cases) {
    ApiError e = bad(c.extra);
    EXPECT_EQ(e.status, 400) << c.extra;
    EXPECT_EQ(e.param, c.param) << c.extra << " -> " << e.message;
  }
  EXPECT_EQ(bad(R"("tools":[])", Endpoint::kCompletion).param, "tools");
}

TEST(OutputConstraint, Forms) {
  using K = OutputConstraint::Kind;
  EXPECT_EQ(ok("").constraint.kind, K::kNone);
  EXPECT_EQ(ok(R"("response_format":{"type":"text"})").constraint.kind, K::kNone);
  EXPECT_EQ(ok(R"("response_format":{"type":"json_object"})").constraint.kind, K::kJsonObject);
  OpenAiRequest s = ok(
      R"("response_format":{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":{"type":"integer"}}})");
  EXPECT_EQ(s.constraint.kind, K::kJsonSchema);
  EXPECT_EQ(nlohmann::json::parse(s.constraint.text), nlohmann::json({{"type", "integer"}}));
  EXPECT_EQ(ok(R"("structured_outputs":{"regex":"a+"})").constraint.text, "a+");
  EXPECT_EQ(ok(R"("structured_outputs":{"choice":["yes","no"]})").constraint.choices,
            (std::vector<std::string>{"yes", "no"}));
  EXPECT_EQ(ok(R"("structured_outputs":{"grammar":"root ::= \"a\""})").constraint.kind,
            K::kGrammar);
  EXPECT_EQ(ok(R"("structured_outputs":{"json":"{\"type\":\"string\"}"})").constraint.kind,
            K::kJsonSchema)
      << "vLLM takes the schema as JSON text too";
  EXPECT_EQ(ok(R"("guided_json":{"type":"string"})").constraint.kind, K::kJsonSchema);
  EXPECT_EQ(ok(R"("guided_regex":"[0-9]+")", Endpoint::kCompletion).constraint.kind, K::kRegex);
  EXPECT_EQ(ok(R"("guided_choice":["a"])").constraint.kind, K::kChoice);
  EXPECT_EQ(ok(R"("structured_outputs":{"json_object":true})").constraint.kind, K::kJsonObject);
  EXPECT_EQ(ok(R"("structured_outputs":{"regex":"a"})", Endpoint::kCompletion).constraint.param,
            "structured_outputs.regex");
  std::string tools = kWeather;
  EXPECT_EQ(ok(tools + R"(,"tool_choice":"none","response_format":{"type":"json_object"})")
                .constraint.kind,
            K::kJsonObject)
      << "tool_choice none leaves the reply to response_format";
}

TEST(OutputConstraint, MistakesNameTheirField) {
  struct Case {
    std::string extra, param;
  } cases[] = {
      {R"("response_format":"json")", "response_format"},
      {R"("response_format":{"type":"xml"})", "response_format.type"},
      {R"("response_format":{"type":"json_schema"})", "response_format.json_schema"},
      {R"("response_format":{"type":"json_schema","json_schema":{"schema":{}}})",
       "response_format.json_schema.name"},
      {R"("response_format":{"type":"json_schema","json_schema":{"name":"x"}})",
       "response_format.json_schema.schema"},
      {R"("response_format":{"type":"json_schema","json_schema":{"name":"x","schema":3}})",
       "response_format.json_schema.schema"},
      {R"("structured_outputs":{"json":"not json"})", "structured_outputs.json"},
      {R"("structured_outputs":{"regex":5})", "structured_outputs.regex"},
      {R"("structured_outputs":{"choice":[]})", "structured_outputs.choice"},
      {R"("structured_outputs":{"choice":[1]})", "structured_outputs.choice"},
      {R"("structured_outputs":{"xml":"a"})", "structured_outputs.xml"},
      {R"("structured_outputs":{"regex":"a","choice":["b"]})", "structured_outputs.regex"},
      {R"("structured_outputs":{"regex":"a"},"guided_json":{})", "guided_json"},
      {R"("structured_outputs":[])", "structured_outputs"},
  };
  for (const Case& c : cases) {
    ApiError e = bad(c.extra);
    EXPECT_EQ(e.status, 400) << c.extra;
    EXPECT_EQ(e.param, c.param) << c.extra << " -> " << e.message;
    EXPECT_FALSE(e.message.empty());
  }
}

}  // namespace
}  // namespace ps

namespace ps {
namespace {

TEST(OutputConstraint, SchemasKeepTheClientsPropertyOrder) {
  // The grammar writes members in schema order; a sorted copy would reorder the output.
  OpenAiRequest r = ok(
      R"("response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"zeta":{"type":"integer"},"alpha":{"type":"string"}}}}})");
  EXPECT_LT(r.constraint.text.find("zeta"), r.constraint.text.find("alpha")) << r.constraint.text;
  OpenAiRequest t = ok(
      R"("tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"zeta":{},"alpha":{}}}}}])");
  const std::string p = t.tools.functions[0].parameters.dump();
  EXPECT_LT(p.find("zeta"), p.find("alpha")) << p;
}

}  // namespace
}  // namespace ps
