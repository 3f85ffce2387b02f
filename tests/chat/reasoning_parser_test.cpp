// The reasoning split, whole and streamed: tags split across deltas are never emitted in part,
// and any split of the reply into deltas gives exactly the whole-text split.
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chat/jinja_template.h"
#include "chat/reasoning_parser.h"

namespace {

using ps::chat::ReasoningParser;
using ps::chat::ReasoningStyle;
using ps::chat::split_reasoning;

const std::string kQwenPrompt = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n";
const std::string kQwenNoThinkPrompt = kQwenPrompt + "<think>\n\n</think>\n\n";
const std::string kR1Prompt = "<｜User｜>hi<｜Assistant｜><think>\n";

TEST(ReasoningParser, Qwen3SplitsThinkBlockFromAnswer) {
  auto s = split_reasoning(ReasoningStyle::kQwen3, kQwenPrompt,
                           "<think>\nLet me see.\n</think>\n\nIt is 4.");
  EXPECT_EQ(s.reasoning, "\nLet me see.\n");
  EXPECT_EQ(s.content, "\n\nIt is 4.");
}

TEST(ReasoningParser, Qwen3WithoutThinkIsAllAnswer) {
  auto s =
      split_reasoning(ReasoningStyle::kQwen3, kQwenPrompt, "Just the answer, no <think> here.");
  EXPECT_FALSE(s.reasoning.has_value());
  EXPECT_EQ(s.content, "Just the answer, no <think> here.");
}

TEST(ReasoningParser, Qwen3DropsWhitespaceBeforeTheOpeningTag) {
  auto s = split_reasoning(ReasoningStyle::kQwen3, kQwenPrompt, "\n <think>r</think>a");
  EXPECT_EQ(s.reasoning, "r");
  EXPECT_EQ(s.content, "a");
}

TEST(ReasoningParser, EnableThinkingFalsePromptMeansNoReasoningField) {
  // Qwen3's template closes an empty think block itself: whatever follows is the answer.
  for (auto style : {ReasoningStyle::kQwen3, ReasoningStyle::kDeepSeekR1}) {
    auto s = split_reasoning(style, kQwenNoThinkPrompt, "Hello!");
    EXPECT_FALSE(s.reasoning.has_value());
    EXPECT_EQ(s.content, "Hello!");
  }
}

TEST(ReasoningParser, DeepSeekR1StartsInsideReasoning) {
  auto s =
      split_reasoning(ReasoningStyle::kDeepSeekR1, kR1Prompt, "Thinking...\n</think>\n\nDone.");
  EXPECT_EQ(s.reasoning, "Thinking...\n");
  EXPECT_EQ(s.content, "\n\nDone.");
  // A model that writes <think> anyway does not get it into the reasoning text.
  s = split_reasoning(ReasoningStyle::kDeepSeekR1, "", "<think>x</think>y");
  EXPECT_EQ(s.reasoning, "x");
  EXPECT_EQ(s.content, "y");
}

TEST(ReasoningParser, UnclosedReasoningStaysReasoning) {
  auto s =
      split_reasoning(ReasoningStyle::kDeepSeekR1, kR1Prompt, "still thinking when max_tokens hit");
  EXPECT_EQ(s.reasoning, "still thinking when max_tokens hit");
  EXPECT_FALSE(s.content.has_value());
  s = split_reasoning(ReasoningStyle::kQwen3, kQwenPrompt, "<think>cut off </thi");
  EXPECT_EQ(s.reasoning, "cut off </thi");
  EXPECT_FALSE(s.content.has_value());
}

TEST(ReasoningParser, PromptThatOpensThinkOverridesQwen3Style) {
  // Qwen3.5/QwQ-style templates open <think> in the generation prompt.
  auto s = split_reasoning(ReasoningStyle::kQwen3, kQwenPrompt + "<think>\n", "r\n</think>\n\nA");
  EXPECT_EQ(s.reasoning, "r\n");
  EXPECT_EQ(s.content, "\n\nA");
}

TEST(ReasoningParser, EmptyThinkBlockHasEmptyReasoning) {
  auto s = split_reasoning(ReasoningStyle::kQwen3, kQwenPrompt, "<think></think>answer");
  EXPECT_EQ(s.reasoning, "");
  EXPECT_EQ(s.content, "answer");
}

TEST(ReasoningParser, StreamingNeverEmitsPartOfATag) {
  const std::string reply = "<think>\nstep 1 < step 2\n</think>\n\nfinal <b>answer</b>";
  ReasoningParser p(ReasoningStyle::kQwen3, kQwenPrompt);
  std::string reasoning, content;
  for (char c : reply) {
    auto d = p.feed(std::string(1, c));
    for (const std::string* part : {&d.reasoning, &d.content}) {
      EXPECT_EQ(part->find("<th"), std::string::npos) << *part;
      EXPECT_EQ(part->find("</t"), std::string::npos) << *part;
    }
    reasoning += d.reasoning;
    content += d.content;
  }
  auto d = p.finish();
  reasoning += d.reasoning;
  content += d.content;
  EXPECT_EQ(reasoning, "\nstep 1 < step 2\n");
  EXPECT_EQ(content, "\n\nfinal <b>answer</b>");
}

TEST(ReasoningParser, ReasoningArrivesBeforeContentWhileStreaming) {
  ReasoningParser p(ReasoningStyle::kDeepSeekR1, kR1Prompt);
  auto a = p.feed("I should");
  EXPECT_EQ(a.reasoning, "I should");
  EXPECT_EQ(a.content, "");
  auto b = p.feed(" greet.</th");
  EXPECT_EQ(b.reasoning, " greet.");  // "</th" held back
  auto c = p.feed("ink>Hi");
  EXPECT_EQ(c.reasoning, "");
  EXPECT_EQ(c.content, "Hi");
}

// Any way of cutting the reply into deltas gives the whole-text split.
TEST(ReasoningParser, StreamedPartsEqualTheWholeSplitAtRandomCuts) {
  const std::vector<std::pair<ReasoningStyle, std::string>> cases = {
      {ReasoningStyle::kQwen3, "<think>\nabc </ def <thinking>\n</think>\n\nanswer </think> after"},
      {ReasoningStyle::kQwen3, "  \n<think>x</think>"},
      {ReasoningStyle::kQwen3, "no tags at all <think>"},
      {ReasoningStyle::kQwen3, "<thin"},
      {ReasoningStyle::kDeepSeekR1, "思考中 😀 </think>答案 🚀"},
      {ReasoningStyle::kDeepSeekR1, "<think>\nr</think>"},
      {ReasoningStyle::kDeepSeekR1, "never closed </thin"},
  };
  std::mt19937 rng(1234);
  for (const auto& [style, reply] : cases) {
    auto whole = split_reasoning(style, "", reply);
    for (int trial = 0; trial < 300; ++trial) {
      ReasoningParser p(style, "");
      std::string reasoning, content;
      size_t at = 0;
      while (at < reply.size()) {
        size_t n = std::uniform_int_distribution<size_t>(0, 5)(rng);
        auto d = p.feed(reply.substr(at, n));
        reasoning += d.reasoning;
        content += d.content;
        at += n;
      }
      auto d = p.finish();
      reasoning += d.reasoning;
      content += d.content;
      ASSERT_EQ(reasoning, whole.reasoning.value_or("")) << reply;
      ASSERT_EQ(content, whole.content.value_or("")) << reply;
      ASSERT_EQ(p.reached_reasoning(), whole.reasoning.has_value()) << reply;
    }
  }
}

TEST(ReasoningParser, StyleNames) {
  EXPECT_EQ(ps::chat::parse_reasoning_style("qwen3"), ReasoningStyle::kQwen3);
  EXPECT_EQ(ps::chat::parse_reasoning_style("deepseek_r1"), ReasoningStyle::kDeepSeekR1);
  EXPECT_FALSE(ps::chat::parse_reasoning_style("deepseek").has_value());
  EXPECT_STREQ(ps::chat::reasoning_style_name(ReasoningStyle::kDeepSeekR1), "deepseek_r1");
}

// The automatic choice on real checkpoints' templates (tests/chat/templates/).
std::string detect_for(const std::string& file, const std::string& bos = "") {
  std::ifstream in(std::string(PAGEDSERVE_SOURCE_DIR) + "/tests/chat/templates/" + file);
  std::stringstream s;
  s << in.rdbuf();
  auto tpl = ps::jinja::Template::parse(s.str());
  nlohmann::ordered_json ctx = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                                {"add_generation_prompt", true},
                                {"tools", nullptr},
                                {"bos_token", bos},
                                {"eos_token", ""}};
  auto style = ps::chat::detect_reasoning_style(s.str(), tpl.render(ctx));
  return style ? ps::chat::reasoning_style_name(*style) : "none";
}

TEST(ReasoningParser, DetectsTheStyleFromRealTemplates) {
  EXPECT_EQ(detect_for("qwen--qwen3-0.6b.jinja"), "qwen3");
  EXPECT_EQ(detect_for("deepseek-ai--deepseek-r1.jinja"), "deepseek_r1");  // knows only </think>
  EXPECT_EQ(detect_for("deepseek-r1-distill-qwen.jinja"), "deepseek_r1");
  EXPECT_EQ(detect_for("qwen--qwen3.5-4b.jinja"), "deepseek_r1");  // opens <think> in the prompt
  EXPECT_EQ(detect_for("meta-llama--llama-3.1-8b-instruct.jinja"), "none");
  EXPECT_EQ(detect_for("qwen--qwen2.5-7b-instruct.jinja"), "none");
}

}  // namespace
