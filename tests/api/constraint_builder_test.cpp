// Tool-call grammars: what each tool_choice lets the model write, checked with the real
// grammar compiler and matcher on the strings the tool-call parser reads back.
#include "openai/constraint_builder.h"

#include <gtest/gtest.h>

#include "tests/structured/test_vocab.h"

namespace ps {
namespace {

using chat::ToolCallFormat;
using test::matches;

ToolRequest weather_and_calc(ToolChoice choice, bool parallel = true, std::string named = {}) {
  ToolRequest r;
  r.functions.push_back({"get_weather", nlohmann::ordered_json::parse(R"({"type": "object",
      "properties": {"city": {"type": "string", "maxLength": 8}, "days": {"type": "integer"}},
      "required": ["city"]})")});
  r.functions.push_back({"calc", nlohmann::ordered_json::parse(R"({"type": "object",
      "properties": {"x": {"enum": [1, 2]}}, "required": ["x"]})")});
  r.choice = choice;
  r.parallel = parallel;
  r.named = std::move(named);
  return r;
}

std::shared_ptr<const CompiledGrammar> grammar_of(const ToolRequest& t, ToolCallFormat f,
                                                  bool lazy) {
  return test::compile_gbnf(tool_calls_gbnf(t, f, lazy));
}

const std::string kParis =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
const std::string kCalc =
    "<tool_call>\n{\"name\": \"calc\", \"arguments\": {\"x\": 2}}\n</tool_call>";

TEST(ToolCallGrammar, HermesRequired) {
  auto g = grammar_of(weather_and_calc(ToolChoice::kRequired), ToolCallFormat::kHermes, false);
  EXPECT_TRUE(matches(g, kParis));
  EXPECT_TRUE(matches(g, kCalc));
  EXPECT_TRUE(matches(g, kParis + "\n" + kCalc)) << "parallel calls, one per line";
  EXPECT_FALSE(matches(g, "")) << "required: a call must come";
  EXPECT_FALSE(matches(g, "Sure. " + kParis)) << "no free text before the call";
  EXPECT_FALSE(matches(g, "<tool_call>\n{\"name\": \"nope\", \"arguments\": {}}\n</tool_call>"));
  EXPECT_FALSE(
      matches(g, "<tool_call>\n{\"name\": \"calc\", \"arguments\": {\"x\": 3}}\n</tool_call>"))
      << "arguments follow the function's schema";
  EXPECT_FALSE(
      matches(g, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>"))
      << "required properties";
  // What the grammar allows, the parser reads back as the call.
  chat::ToolCallSplit split =
      chat::split_tool_calls(ToolCallFormat::kHermes, kParis + "\n" + kCalc);
  ASSERT_EQ(split.calls.size(), 2u);
  EXPECT_EQ(split.calls[0].arguments, "{\"city\": \"Paris\"}");
  EXPECT_FALSE(split.content.has_value());
}

TEST(ToolCallGrammar, HermesSingleAndNamed) {
  auto one = grammar_of(weather_and_calc(ToolChoice::kRequired, /*parallel=*/false),
                        ToolCallFormat::kHermes, false);
  EXPECT_TRUE(matches(one, kParis));
  EXPECT_FALSE(matches(one, kParis + "\n" + kCalc)) << "parallel_tool_calls false: one call";
  auto named = grammar_of(weather_and_calc(ToolChoice::kNamed, true, "calc"),
                          ToolCallFormat::kHermes, false);
  EXPECT_TRUE(matches(named, kCalc));
  EXPECT_FALSE(matches(named, kParis)) << "named: only that function";
  EXPECT_FALSE(matches(named, kCalc + "\n" + kCalc)) << "named: one call";
}

TEST(ToolCallGrammar, HermesLazyIsWhatFollowsTheTrigger) {
  auto g = grammar_of(weather_and_calc(ToolChoice::kAuto), ToolCallFormat::kHermes, true);
  EXPECT_TRUE(matches(g, kParis.substr(std::string("<tool_call>").size())));
  EXPECT_TRUE(matches(g, kParis.substr(11) + "\n" + kCalc));
  EXPECT_FALSE(matches(g, kParis)) << "the trigger itself was already written";
}

TEST(ToolCallGrammar, Llama3AndMistral) {
  auto l = grammar_of(weather_and_calc(ToolChoice::kRequired), ToolCallFormat::kLlama3Json, false);
  const std::string call = "{\"name\": \"calc\", \"parameters\": {\"x\": 1}}";
  EXPECT_TRUE(matches(l, call));
  EXPECT_TRUE(matches(l, call + "; " + call));
  EXPECT_FALSE(matches(l, "{\"name\": \"calc\", \"arguments\": {\"x\": 1}}"));
  EXPECT_EQ(chat::split_tool_calls(ToolCallFormat::kLlama3Json, call + "; " + call).calls.size(),
            2u);
  auto m = grammar_of(weather_and_calc(ToolChoice::kRequired), ToolCallFormat::kMistral, false);
  const std::string list =
      "[TOOL_CALLS][{\"name\": \"calc\", \"arguments\": {\"x\": 1}}, "
      "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\", \"days\": 3}}]";
  EXPECT_TRUE(matches(m, list));
  EXPECT_EQ(chat::split_tool_calls(ToolCallFormat::kMistral, list).calls.size(), 2u);
  auto lazy = grammar_of(weather_and_calc(ToolChoice::kAuto), ToolCallFormat::kMistral, true);
  EXPECT_TRUE(matches(lazy, list.substr(std::string("[TOOL_CALLS]").size())));
}

TEST(ConstraintFor, ToolChoiceDecidesTheSpec) {
  OpenAiRequest r;
  r.tools = weather_and_calc(ToolChoice::kAuto);
  auto spec = constraint_for(r, ToolCallFormat::kHermes);
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->trigger, "<tool_call>") << "auto is lazy: free until the model opens a call";
  r.tools.choice = ToolChoice::kRequired;
  spec = constraint_for(r, ToolCallFormat::kHermes);
  ASSERT_TRUE(spec.has_value());
  EXPECT_TRUE(spec->trigger.empty());
  r.tools.choice = ToolChoice::kNone;
  EXPECT_FALSE(constraint_for(r, ToolCallFormat::kHermes).has_value());
  r.constraint = {OutputConstraint::Kind::kRegex, "a+", {}, "structured_outputs.regex"};
  spec = constraint_for(r, ToolCallFormat::kHermes);
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->kind, ConstraintSpec::Kind::kRegex);
  EXPECT_EQ(spec->text, "a+");
}

TEST(ConstraintFor, GbnfLiteralEscapes) {
  EXPECT_EQ(gbnf_literal("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  auto g = test::compile_gbnf("root ::= " + gbnf_literal("q\"\\\t\x01z"));
  EXPECT_TRUE(matches(g, "q\"\\\t\x01z"));
}

}  // namespace
}  // namespace ps
