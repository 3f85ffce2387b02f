// The request-level rendering: transformers' context, chat_template_kwargs, and
// continue_final_message, on real templates from tests/chat/templates/.
#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "chat/chat_prompt.h"

namespace {

using ps::chat::ChatPromptError;
using ps::chat::ChatPromptRequest;
using ps::chat::render_chat_prompt;
using Json = nlohmann::ordered_json;

ps::jinja::Template corpus_template(const std::string& file) {
  std::ifstream in(std::string(PAGEDSERVE_SOURCE_DIR) + "/tests/chat/templates/" + file);
  std::stringstream s;
  s << in.rdbuf();
  return ps::jinja::Template::parse(s.str());
}

Json user(const std::string& text) {
  return {{"role", "user"}, {"content", text}};
}

TEST(ChatPrompt, ContextIsWhatTransformersPasses) {
  ChatPromptRequest r;
  r.messages = Json::array({user("hi")});
  r.chat_template_kwargs = {{"enable_thinking", false}, {"custom", "x"}};
  Json ctx = ps::chat::chat_context(r, {"<s>", "</s>"});
  EXPECT_EQ(
      ctx.dump(),
      R"({"messages":[{"role":"user","content":"hi"}],"tools":null,"documents":null,)"
      R"("add_generation_prompt":true,"bos_token":"<s>","eos_token":"</s>","enable_thinking":false,"custom":"x"})");
}

TEST(ChatPrompt, EnableThinkingFalseReachesQwen3sTemplate) {
  auto tpl = corpus_template("qwen--qwen3-0.6b.jinja");
  ChatPromptRequest r;
  r.messages = Json::array({user("hi")});
  EXPECT_EQ(render_chat_prompt(tpl, r, {}),
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  r.chat_template_kwargs = {{"enable_thinking", false}};
  EXPECT_EQ(render_chat_prompt(tpl, r, {}),
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(ChatPrompt, ThinkInAssistantHistoryIsStrippedByQwen3sTemplate) {
  auto tpl = corpus_template("qwen--qwen3-0.6b.jinja");
  ChatPromptRequest r;
  r.messages = Json::array(
      {user("a"), {{"role", "assistant"}, {"content", "<think>\nr\n</think>\n\nb"}}, user("c")});
  EXPECT_EQ(render_chat_prompt(tpl, r, {}),
            "<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\nb<|im_end|>\n<|im_start|>"
            "user\nc<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatPrompt, KwargsMayNotReplaceRequestFields) {
  auto tpl = corpus_template("chatml.jinja");
  ChatPromptRequest r;
  r.messages = Json::array({user("hi")});
  r.chat_template_kwargs = {{"messages", Json::array()}};
  EXPECT_THROW(render_chat_prompt(tpl, r, {}), ChatPromptError);
  r.chat_template_kwargs = Json::array();
  EXPECT_THROW(render_chat_prompt(tpl, r, {}), ChatPromptError);
}

TEST(ChatPrompt, ContinueFinalMessageCutsAfterTheAssistantText) {
  auto tpl = corpus_template("qwen--qwen2.5-7b-instruct.jinja");
  ChatPromptRequest r;
  r.messages = Json::array(
      {user("Write a haiku."), {{"role", "assistant"}, {"content", "Autumn moonlight"}}});
  r.add_generation_prompt = false;
  r.continue_final_message = true;
  std::string out = render_chat_prompt(tpl, r, {});
  EXPECT_TRUE(out.size() > 16 && out.compare(out.size() - 16, 16, "Autumn moonlight") == 0) << out;
  EXPECT_EQ(out.find("<|im_end|>", out.rfind("assistant")), std::string::npos);
}

TEST(ChatPrompt, ContinueFinalMessageKeepsTrailingSpaceOnlyIfTheTemplateDid) {
  auto tpl = corpus_template("llama-3.1-instruct.jinja");  // trims message content
  ChatPromptRequest r;
  r.messages =
      Json::array({user("Name a colour."), {{"role", "assistant"}, {"content", "Sure, "}}});
  r.add_generation_prompt = false;
  r.continue_final_message = true;
  std::string out = render_chat_prompt(tpl, r, {"<|begin_of_text|>", "<|eot_id|>"});
  EXPECT_TRUE(out.compare(out.size() - 5, 5, "Sure,") == 0) << out;
  auto keeps = corpus_template("qwen--qwen2.5-7b-instruct.jinja");  // keeps it
  out = render_chat_prompt(keeps, r, {});
  EXPECT_TRUE(out.compare(out.size() - 6, 6, "Sure, ") == 0) << out;
}

TEST(ChatPrompt, ContinueFinalMessageErrors) {
  auto tpl = corpus_template("chatml.jinja");
  ChatPromptRequest r;
  r.messages = Json::array({user("a"), {{"role", "assistant"}, {"content", "b"}}});
  r.continue_final_message = true;
  r.add_generation_prompt = true;
  EXPECT_THROW(render_chat_prompt(tpl, r, {}), ChatPromptError);  // vLLM: not both
  r.add_generation_prompt = false;
  r.messages.back()["content"] = nullptr;
  EXPECT_THROW(render_chat_prompt(tpl, r, {}), std::exception);
  r.messages = Json::array();
  EXPECT_THROW(ps::chat::cut_after_final_message("x", r.messages), ChatPromptError);
}

}  // namespace

namespace {

// The server renders one parsed template from many HTTP threads at once.
TEST(ChatPrompt, OneTemplateRendersConcurrently) {
  auto tpl = corpus_template("qwen--qwen3-0.6b.jinja");
  ChatPromptRequest r;
  r.messages = Json::array(
      {user("hi"), {{"role", "assistant"}, {"content", "<think>x</think>y"}}, user("again")});
  r.tools = Json::array({{{"type", "function"},
                          {"function", {{"name", "f"}, {"parameters", {{"type", "object"}}}}}}});
  const std::string expected = render_chat_prompt(tpl, r, {});
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i)
        if (render_chat_prompt(tpl, r, {}) != expected) ++mismatches;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace

namespace {

TEST(ChatPrompt, ContentFormatOfRealTemplates) {
  // vLLM's "openai" format: the template loops over content parts itself.
  EXPECT_TRUE(corpus_template("qwen--qwen2.5-vl-7b-instruct.jinja").iterates_message_content());
  EXPECT_TRUE(corpus_template("meta-llama--llama-3.2-11b-vision-instruct.jinja")
                  .iterates_message_content());
  EXPECT_TRUE(corpus_template("qwen--qwen3.5-4b.jinja").iterates_message_content());
  EXPECT_FALSE(corpus_template("qwen--qwen3-0.6b.jinja").iterates_message_content());
  EXPECT_FALSE(corpus_template("chatml.jinja").iterates_message_content());
  EXPECT_FALSE(corpus_template("mistralai--mistral-7b-instruct-v0.3-json-schema.jinja")
                   .iterates_message_content());
}

TEST(ChatPrompt, FlattenContentPartsForStringTemplates) {
  Json messages = Json::array(
      {{{"role", "user"},
        {"content",
         Json::array({{{"type", "text"}, {"text", "a"}}, {{"type", "text"}, {"text", "b"}}})},
        {"name", "ana"}},
       {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", Json::array()}}});
  Json flat = ps::chat::flatten_content_parts(messages);
  EXPECT_EQ(flat[0]["content"], "a\nb");
  EXPECT_EQ(flat[0]["name"], "ana");
  EXPECT_TRUE(flat[1]["content"].is_null());
  messages[0]["content"].push_back({{"type", "image_url"}, {"image_url", {{"url", "x"}}}});
  try {
    ps::chat::flatten_content_parts(messages);
    FAIL();
  } catch (const ChatPromptError& e) {
    EXPECT_NE(std::string(e.what()).find("'image_url'"), std::string::npos);
  }
}

}  // namespace
