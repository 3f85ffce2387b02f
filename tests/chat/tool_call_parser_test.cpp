#include "chat/tool_call_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace ps::chat {
namespace {

// Deterministic ids so whole and streamed parses can be compared.
ToolCallIdSource counting_ids() {
  auto n = std::make_shared<int>(0);
  return [n] { return "call_" + std::to_string((*n)++); };
}

// Feeds `text` in pieces cut at random places; returns content and calls as a client that
// assembles the deltas sees them, checking the delta rules on the way.
ToolCallSplit stream(ToolCallFormat format, const std::string& text, uint32_t seed) {
  ToolCallParser parser(format, counting_ids());
  std::mt19937 rng(seed);
  std::string content;
  std::vector<ToolCall> calls;
  auto take = [&](const ToolStreamDelta& d) {
    content += d.content;
    for (const ToolCallDelta& c : d.calls) {
      if (!c.id.empty()) {
        EXPECT_EQ(c.index, int32_t(calls.size())) << "a new call opens the next index";
        EXPECT_FALSE(c.name.empty()) << "the first delta of a call carries its name";
        calls.push_back({c.id, c.name, ""});
      } else {
        EXPECT_TRUE(c.name.empty());
        ASSERT_LT(size_t(c.index), calls.size()) << "arguments before the call's name";
      }
      calls[size_t(c.index)].arguments += c.arguments;
    }
  };
  size_t at = 0;
  while (at < text.size()) {
    size_t n = std::min(text.size() - at, size_t(1 + rng() % 7));
    take(parser.feed(std::string_view(text).substr(at, n)));
    at += n;
  }
  take(parser.finish());
  ToolCallSplit out;
  if (!content.empty()) out.content = content;
  out.calls = calls;
  return out;
}

ToolCallSplit whole(ToolCallFormat format, const std::string& text) {
  return split_tool_calls(format, text, counting_ids());
}

// Every text is checked whole, char by char and in random pieces: all must agree.
ToolCallSplit parse_all_ways(ToolCallFormat format, const std::string& text) {
  ToolCallSplit w = whole(format, text);
  for (uint32_t seed = 0; seed < 20; ++seed) {
    ToolCallSplit s = stream(format, text, seed);
    EXPECT_EQ(s.content, w.content) << "seed " << seed << " text: " << text;
    EXPECT_EQ(s.calls.size(), w.calls.size()) << "seed " << seed;
    for (size_t i = 0; i < std::min(s.calls.size(), w.calls.size()); ++i) {
      EXPECT_EQ(s.calls[i].id, w.calls[i].id);
      EXPECT_EQ(s.calls[i].name, w.calls[i].name);
      EXPECT_EQ(s.calls[i].arguments, w.calls[i].arguments) << "seed " << seed;
    }
  }
  return w;
}

constexpr auto kHermes = ToolCallFormat::kHermes;
constexpr auto kLlama = ToolCallFormat::kLlama3Json;
constexpr auto kMistral = ToolCallFormat::kMistral;

TEST(ToolCallParser, HermesOneCall) {
  auto r = parse_all_ways(
      kHermes,
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
      "</tool_call>");
  EXPECT_FALSE(r.content.has_value());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].id, "call_0");
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments, "{\"city\": \"Paris\"}");
}

TEST(ToolCallParser, HermesContentThenTwoCallsSeparatorDropped) {
  auto r = parse_all_ways(kHermes,
                          "Let me check.\n\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n"
                          "</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": "
                          "{\"x\": [1, {\"y\": null}]}}\n</tool_call>\n");
  EXPECT_EQ(r.content, "Let me check.");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].name, "a");
  EXPECT_EQ(r.calls[0].arguments, "{}");
  EXPECT_EQ(r.calls[1].name, "b");
  EXPECT_EQ(r.calls[1].arguments, "{\"x\": [1, {\"y\": null}]}");
  EXPECT_EQ(r.calls[1].id, "call_1");
}

TEST(ToolCallParser, TextWithoutCallsIsUntouched) {
  for (std::string text :
       {"a < b and <tool but not a call", "ends with a partial tag <tool_ca",
        "  leading and trailing space \n", "<tool_cal>x</tool_call>", "", "\n\n"}) {
    auto r = parse_all_ways(kHermes, text);
    EXPECT_EQ(r.content.value_or(""), text);
    EXPECT_TRUE(r.calls.empty());
  }
}

TEST(ToolCallParser, BrokenCallBeforeItsNameGoesBackToContent) {
  for (std::string text :
       {"<tool_call>not json</tool_call>", "x <tool_call>\n{\"arguments\": {}}\n</tool_call>",
        "<tool_call>{\"name\": 5}</tool_call>", "<tool_call>{\"name\" \"f\"}"}) {
    auto r = parse_all_ways(kHermes, text);
    EXPECT_EQ(r.content.value_or(""), text);
    EXPECT_TRUE(r.calls.empty()) << text;
  }
}

TEST(ToolCallParser, ArgumentsBeforeNameAreHeldUntilTheName) {
  auto r = parse_all_ways(
      kHermes, "<tool_call>{\"arguments\": {\"q\": \"}\"}, \"name\": \"search\"}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "search");
  EXPECT_EQ(r.calls[0].arguments, "{\"q\": \"}\"}");
}

TEST(ToolCallParser, StringArgumentsAreDecodedJson) {
  auto r = parse_all_ways(
      kHermes, "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, "{\"a\": 1}");
}

TEST(ToolCallParser, MissingArgumentsBecomeEmptyObjectAndOtherKeysAreSkipped) {
  auto r = parse_all_ways(kHermes,
                          "<tool_call>{\"name\": \"now\", \"n\": 12, \"ok\": true}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, "{}");
}

TEST(ToolCallParser, EscapesBracketsAndUnicodeInsideArguments) {
  const std::string args = "{\"q\": \"a}b\\\"c]\\\\\", \"z\": \"\xe5\xa4\xa9\xe6\xb0\x94\"}";
  auto r = parse_all_ways(kHermes,
                          "<tool_call>{\"name\": \"f\", \"arguments\": " + args + "}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, args);
}

TEST(ToolCallParser, CutInsideArgumentsKeepsTheNamedCall) {
  auto r = parse_all_ways(kHermes, "<tool_call>{\"name\": \"f\", \"arguments\": {\"city\": \"Par");
  EXPECT_FALSE(r.content.has_value());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, "{\"city\": \"Par");
}

TEST(ToolCallParser, MissingEndTagThenTextIsContent) {
  auto r = parse_all_ways(kHermes, "<tool_call>{\"name\": \"f\", \"arguments\": {}} done");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.content, " done");
}

TEST(ToolCallParser, Llama3JsonCalls) {
  auto r = parse_all_ways(kLlama,
                          " {\"name\": \"f\", \"parameters\": {\"x\": 1}}; {\"name\": \"g\", "
                          "\"parameters\": {}}");
  EXPECT_FALSE(r.content.has_value());
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].arguments, "{\"x\": 1}");
  EXPECT_EQ(r.calls[1].name, "g");
  auto tagged = parse_all_ways(kLlama, "<|python_tag|>{\"name\": \"f\", \"parameters\": {}}");
  ASSERT_EQ(tagged.calls.size(), 1u);
  EXPECT_FALSE(tagged.content.has_value());
}

TEST(ToolCallParser, Llama3JsonOnlyAtTheStart) {
  for (std::string text : {"Hello {\"name\": \"f\", \"parameters\": {}}", "{\"answer\": 42}",
                           "<|python", "{not json"}) {
    auto r = parse_all_ways(kLlama, text);
    EXPECT_EQ(r.content.value_or(""), text);
    EXPECT_TRUE(r.calls.empty()) << text;
  }
}

TEST(ToolCallParser, MistralList) {
  auto r = parse_all_ways(kMistral,
                          "Sure.[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {\"x\": [1, 2]}}, "
                          "{\"name\": \"b\", \"arguments\": {}}]");
  EXPECT_EQ(r.content, "Sure.");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].arguments, "{\"x\": [1, 2]}");
  EXPECT_EQ(r.calls[1].name, "b");
  auto broken = parse_all_ways(kMistral, "[TOOL_CALLS]{\"name\": \"a\"}");
  EXPECT_EQ(broken.content, "[TOOL_CALLS]{\"name\": \"a\"}");
  EXPECT_TRUE(broken.calls.empty());
}

TEST(ToolCallParser, FirstDeltaCarriesIdAndNameThenFragments) {
  ToolCallParser p(kHermes, counting_ids());
  EXPECT_TRUE(p.feed("<tool_call>{\"name\": \"f").calls.empty()) << "name not complete yet";
  ToolStreamDelta d = p.feed("\"");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].id, "call_0");
  EXPECT_EQ(d.calls[0].name, "f");
  EXPECT_EQ(d.calls[0].arguments, "");
  d = p.feed(", \"arguments\": {\"a\"");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_TRUE(d.calls[0].id.empty());
  EXPECT_EQ(d.calls[0].arguments, "{\"a\"");
  d = p.feed(": 1}}</tool_call>");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_TRUE(d.calls[0].id.empty());
  EXPECT_EQ(d.calls[0].arguments, ": 1}");
  EXPECT_EQ(p.calls()[0].arguments, "{\"a\": 1}");
}

TEST(ToolCallParser, NamesAndDetection) {
  EXPECT_EQ(parse_tool_call_format("hermes"), kHermes);
  EXPECT_EQ(parse_tool_call_format("llama3_json"), kLlama);
  EXPECT_EQ(parse_tool_call_format("mistral"), kMistral);
  EXPECT_FALSE(parse_tool_call_format("pythonic").has_value());
  EXPECT_EQ(detect_tool_call_format("{{ '<tool_call>\\n' }}"), kHermes);
  EXPECT_EQ(detect_tool_call_format("[TOOL_CALLS] {{ x }}"), kMistral);
  EXPECT_EQ(detect_tool_call_format("<|python_tag|>"), kLlama);
  EXPECT_FALSE(detect_tool_call_format("{{ messages }}").has_value());
  EXPECT_EQ(random_tool_call_id().size(), 29u);
  EXPECT_NE(random_tool_call_id(), random_tool_call_id());
}

// qwen3_coder (Qwen3.5, Qwen3-Coder): <tool_call><function=f><parameter=k>v</parameter>...

constexpr auto kXml = ToolCallFormat::kQwen3Xml;

TEST(ToolCallParser, Qwen3XmlContentThenTwoCallsWithTypedValues) {
  auto r = parse_all_ways(kXml,
                          "I will look.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\n"
                          "Paris, France\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
                          "</function>\n</tool_call>\n<tool_call>\n<function=search>\n"
                          "<parameter=filters>\n{\"lang\": [\"en\", \"fr\"]}\n</parameter>\n"
                          "<parameter=exact>\ntrue\n</parameter>\n<parameter=note>\nline one\n"
                          "line two <b>\n</parameter>\n</function>\n</tool_call>");
  EXPECT_EQ(r.content, "I will look.");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments, "{\"city\":\"Paris, France\",\"days\":3}");
  EXPECT_EQ(r.calls[1].name, "search");
  // An object value, a literal, and text with a newline and markup inside stay what they are.
  EXPECT_EQ(r.calls[1].arguments,
            "{\"filters\":{\"lang\":[\"en\",\"fr\"]},\"exact\":true,\"note\":\"line one\\nline "
            "two <b>\"}");
}

TEST(ToolCallParser, Qwen3XmlNoParametersAndTextAfter) {
  auto r = parse_all_ways(kXml, "<tool_call>\n<function=now>\n</function>\n</tool_call>\nDone.");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "now");
  EXPECT_EQ(r.calls[0].arguments, "{}");
  EXPECT_EQ(r.content, "\nDone.");
}

TEST(ToolCallParser, Qwen3XmlBrokenCallsGoBackToContent) {
  // A hermes-style JSON body is not this format: the text is content.
  auto json = parse_all_ways(kXml, "<tool_call>\n{\"name\": \"f\"}\n</tool_call>");
  EXPECT_TRUE(json.calls.empty());
  EXPECT_EQ(json.content, "<tool_call>\n{\"name\": \"f\"}\n</tool_call>");
  // Cut before the name is complete: the text it was.
  auto cut = parse_all_ways(kXml, "Hi <tool_call>\n<function=get_wea");
  EXPECT_TRUE(cut.calls.empty());
  EXPECT_EQ(cut.content, "Hi <tool_call>\n<function=get_wea");
  // Cut inside a parameter after the name: the call stands with the complete parameters.
  auto partial = parse_all_ways(
      kXml, "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\nhal");
  ASSERT_EQ(partial.calls.size(), 1u);
  EXPECT_EQ(partial.calls[0].arguments, "{\"a\":1}");
  EXPECT_FALSE(partial.content.has_value());
  // No name at all: "<function=>" is not a call.
  auto unnamed = parse_all_ways(kXml, "<tool_call><function=></function></tool_call>");
  EXPECT_TRUE(unnamed.calls.empty());
}

TEST(ToolCallParser, Qwen3XmlStreamsTheNameThenTheArguments) {
  ToolCallParser p(kXml, counting_ids());
  EXPECT_TRUE(p.feed("<tool_call>\n<function=ge").calls.empty()) << "name not complete yet";
  ToolStreamDelta d = p.feed("t>\n<parameter=x>\n");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].id, "call_0");
  EXPECT_EQ(d.calls[0].name, "get");
  EXPECT_TRUE(p.feed("7\n</parameter>\n").calls.empty()) << "arguments wait for </function>";
  d = p.feed("</function>\n</tool_call>");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_TRUE(d.calls[0].id.empty());
  EXPECT_EQ(d.calls[0].arguments, "{\"x\":7}");
}

TEST(ToolCallParser, Qwen3XmlNamesAndDetection) {
  EXPECT_EQ(parse_tool_call_format("qwen3_coder"), kXml);
  EXPECT_EQ(parse_tool_call_format("qwen3_xml"), kXml);
  EXPECT_STREQ(tool_call_format_name(kXml), "qwen3_coder");
  EXPECT_EQ(tool_call_start_tag(kXml), "<tool_call>");
  // Qwen3.5's template writes <function=...> inside <tool_call>: not hermes.
  EXPECT_EQ(detect_tool_call_format("{{ '<tool_call>\\n<function=' + name + '>' }}"), kXml);
  EXPECT_EQ(detect_tool_call_format("{{ '<tool_call>\\n' }}"), kHermes);
}

}  // namespace
}  // namespace ps::chat
