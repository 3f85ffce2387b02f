// gpt-oss's harmony replies through the reasoning and tool-call parsers (harmony_reader.h),
// whole and streamed: analysis is reasoning, final is content, a message to functions.NAME is a
// tool call; markers never reach content, and every split of a reply into two deltas gives
// exactly the whole-text result.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chat/reasoning_parser.h"
#include "chat/tool_call_parser.h"

namespace {

using ps::chat::ReasoningParser;
using ps::chat::ReasoningStyle;
using ps::chat::ToolCall;
using ps::chat::ToolCallFormat;
using ps::chat::ToolCallParser;

// What the gpt-oss template's generation prompt ends with.
const std::string kPrompt = "<|start|>user<|message|>Weather in Paris?<|end|><|start|>assistant";

struct Reply {
  std::string reasoning, content;
  bool reached_reasoning = false;
  std::vector<ToolCall> calls;
  std::string streamed_names, streamed_arguments;  // concatenated from the call deltas
};

// The server's chain (api/generation.cpp): the reasoning parser, then the tool-call parser on
// its content; `text` fed in the given pieces.
Reply run_chain(const std::vector<std::string>& pieces, bool reasoning_parser = true) {
  Reply r;
  ReasoningParser rp(ReasoningStyle::kHarmony, kPrompt);
  int next_id = 0;
  ToolCallParser tp(ToolCallFormat::kHarmony, [&] { return "call_" + std::to_string(next_id++); });
  auto take = [&](const ps::chat::ReasoningDelta& d) {
    r.reasoning += d.reasoning;
    ps::chat::ToolStreamDelta t = tp.feed(d.content);
    r.content += t.content;
    for (const auto& c : t.calls) r.streamed_names += c.name, r.streamed_arguments += c.arguments;
  };
  for (const std::string& p : pieces) {
    if (reasoning_parser) {
      take(rp.feed(p));
    } else {
      take({"", p});
    }
  }
  if (reasoning_parser) take(rp.finish());
  ps::chat::ToolStreamDelta t = tp.finish();
  r.content += t.content;
  for (const auto& c : t.calls) r.streamed_names += c.name, r.streamed_arguments += c.arguments;
  r.reached_reasoning = rp.reached_reasoning();
  r.calls = tp.calls();
  return r;
}

// The whole reply, and the same reply cut into two deltas at every byte: identical results.
Reply run_every_split(const std::string& text, bool reasoning_parser = true) {
  const Reply whole = run_chain({text}, reasoning_parser);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    const Reply two = run_chain({text.substr(0, cut), text.substr(cut)}, reasoning_parser);
    EXPECT_EQ(two.reasoning, whole.reasoning) << "cut at " << cut;
    EXPECT_EQ(two.content, whole.content) << "cut at " << cut;
    EXPECT_EQ(two.calls.size(), whole.calls.size()) << "cut at " << cut;
    EXPECT_EQ(two.streamed_arguments, whole.streamed_arguments) << "cut at " << cut;
  }
  // Token by token as the engine streams (here: one character a delta).
  std::vector<std::string> chars;
  for (char c : text) chars.emplace_back(1, c);
  const Reply streamed = run_chain(chars, reasoning_parser);
  EXPECT_EQ(streamed.reasoning, whole.reasoning);
  EXPECT_EQ(streamed.content, whole.content);
  return whole;
}

TEST(HarmonyParser, AnalysisIsReasoningAndFinalIsContent) {
  const Reply r = run_every_split(
      "<|channel|>analysis<|message|>User asks 2+2. Easy.<|end|>"
      "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.");
  EXPECT_TRUE(r.reached_reasoning);
  EXPECT_EQ(r.reasoning, "User asks 2+2. Easy.");
  EXPECT_EQ(r.content, "2 + 2 = 4.");
  EXPECT_TRUE(r.calls.empty());
}

TEST(HarmonyParser, ToolCallAfterAnalysisWithTheRecipientAfterTheChannel) {
  // <|call|> is a stop token: the text ends with the arguments.
  const Reply r = run_every_split(
      "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
      "to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}");
  EXPECT_EQ(r.reasoning, "Need weather.");
  EXPECT_EQ(r.content, "");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].id, "call_0");
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments, "{\"city\":\"Paris\"}");
  EXPECT_EQ(r.streamed_names, "get_weather");
  EXPECT_EQ(r.streamed_arguments, "{\"city\":\"Paris\"}");
}

TEST(HarmonyParser, RecipientBeforeTheChannelAndTwoCalls) {
  const Reply r = run_every_split(
      " to=functions.a<|channel|>commentary json<|message|>{\"x\":1}<|call|>"
      "<|start|>assistant to=functions.b<|channel|>commentary json<|message|>{}<|call|>");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].name, "a");
  EXPECT_EQ(r.calls[0].arguments, "{\"x\":1}");
  EXPECT_EQ(r.calls[1].name, "b");
  EXPECT_EQ(r.calls[1].arguments, "{}");
  EXPECT_EQ(r.content, "");
  EXPECT_FALSE(r.reached_reasoning);
}

TEST(HarmonyParser, PreambleIsContentAndAnotherRecipientKeepsItsName) {
  const Reply r = run_every_split(
      "<|channel|>commentary<|message|>Checking the browser.<|end|>"
      "<|start|>assistant<|channel|>analysis to=browser.search code<|message|>{\"query\":\"q\"}");
  EXPECT_EQ(r.content, "Checking the browser.");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "browser.search");
  EXPECT_EQ(r.reasoning, "");  // a message to a recipient is a call, whatever its channel
}

TEST(HarmonyParser, TextOutsideTheFormatIsContentUnchanged) {
  for (const std::string text :
       {"Hello <b>there</b> a<|b", " to be or not", " t", "<", "plain", "x <|end|> y"}) {
    const Reply r = run_every_split(text);
    // "<|end|>" in plain text ends the (plain) message: the marker and the white space between
    // messages are dropped.
    const std::string want = text == "x <|end|> y" ? "x y" : text;
    EXPECT_EQ(r.content, want) << text;
    EXPECT_EQ(r.reasoning, "") << text;
    EXPECT_TRUE(r.calls.empty()) << text;
  }
}

TEST(HarmonyParser, CutOffHeadersAreDroppedAndCutOffBodiesKept) {
  EXPECT_EQ(run_every_split("<|channel|>fin").content, "");
  const Reply r = run_every_split("<|channel|>final<|message|>Par<|end|><|start|>assist");
  EXPECT_EQ(r.content, "Par");
  const Reply a = run_every_split("<|channel|>analysis<|message|>thinking about");
  EXPECT_EQ(a.reasoning, "thinking about");
  EXPECT_TRUE(a.reached_reasoning);
  EXPECT_EQ(a.content, "");
}

TEST(HarmonyParser, WithoutTheReasoningParserAnalysisIsContentForTheToolParser) {
  const Reply r = run_every_split(
      "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>commentary "
      "to=functions.f <|constrain|>json<|message|>{}",
      /*reasoning_parser=*/false);
  EXPECT_EQ(r.content, "think");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "f");
}

TEST(HarmonyParser, NamesAndDetectionFromTheGptOssTemplate) {
  EXPECT_EQ(ps::chat::parse_reasoning_style("harmony"), ReasoningStyle::kHarmony);
  EXPECT_EQ(ps::chat::parse_reasoning_style("openai_gptoss"), ReasoningStyle::kHarmony);
  EXPECT_EQ(ps::chat::parse_tool_call_format("openai"), ToolCallFormat::kHarmony);
  EXPECT_STREQ(ps::chat::reasoning_style_name(ReasoningStyle::kHarmony), "harmony");
  EXPECT_STREQ(ps::chat::tool_call_format_name(ToolCallFormat::kHarmony), "harmony");
  std::ifstream in(std::string(PAGEDSERVE_SOURCE_DIR) +
                   "/tests/chat/templates/openai--gpt-oss-120b.jinja");
  std::stringstream ss;
  ss << in.rdbuf();
  ASSERT_FALSE(ss.str().empty());
  EXPECT_EQ(ps::chat::detect_reasoning_style(ss.str(), kPrompt), ReasoningStyle::kHarmony);
  EXPECT_EQ(ps::chat::detect_tool_call_format(ss.str()), ToolCallFormat::kHarmony);
}

}  // namespace
