// The renderer serve, chat and /tokenize share: where its template comes from, the builtins,
// vLLM's "auto" content-part rule, and load errors, on real files in a temp dir.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "chat/chat_renderer.h"
#include "chat/chat_template.h"
#include "chat/template_source.h"
#include "tests/chat/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using ps::chat::ChatPromptRequest;
using ps::chat::ChatRenderer;

// Each test's own directory, named after this file's tests.
struct TempDir : ps::testing_util::TempDir {
  TempDir() : ps::testing_util::TempDir("pagedserve_renderer_") {}
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string qwen3_source() {
  return read_file(fs::path(PAGEDSERVE_SOURCE_DIR) / "tests/chat/templates/qwen--qwen3-0.6b.jinja");
}

ChatPromptRequest request(ordered_json messages) {
  ChatPromptRequest r;
  r.messages = std::move(messages);
  return r;
}

ordered_json conversation() {
  return ordered_json::array({{{"role", "system"}, {"content", "Be brief."}},
                              {{"role", "user"}, {"content", "  Hi there  "}},
                              {{"role", "assistant"}, {"content", "Hello!"}},
                              {{"role", "user"}, {"content", "你好 🙂"}}});
}

// The builtins are Jinja now; they must write exactly what the C++ renderer wrote.
TEST(ChatRenderer, BuiltinsMatchTheCppRenderer) {
  std::vector<ps::ChatMessage> msgs;
  for (const auto& m : conversation()) msgs.push_back({m["role"], m["content"]});
  for (const char* name : {"chatml", "llama3", "plain"}) {
    auto r = ChatRenderer::builtin(name);
    ASSERT_TRUE(r) << name;
    auto old = ps::ChatTemplate::from_name(name);
    for (bool gen : {true, false}) {
      ChatPromptRequest req = request(conversation());
      req.add_generation_prompt = gen;
      EXPECT_EQ(r->render(req), old->render(msgs, gen)) << name << " gen=" << gen;
    }
    EXPECT_EQ(r->describe(), std::string(name) + " (builtin)");
    EXPECT_FALSE(r->detected_reasoning_style());
  }
  EXPECT_FALSE(ChatRenderer::builtin("vicuna"));
  EXPECT_EQ(ChatRenderer::builtin_names(), "chatml, llama3, plain");
}

TEST(ChatRenderer, CheckpointTemplateIsRunAsWritten) {
  TempDir dir;
  ordered_json config = {{"chat_template", qwen3_source()}, {"eos_token", "<|im_end|>"}};
  dir.write("tokenizer_config.json", config.dump());
  std::string notice;
  ChatRenderer r = ChatRenderer::load("", dir.path(), &notice);
  EXPECT_EQ(notice, "");
  EXPECT_EQ(r.describe(),
            "jinja (" + (dir.path() / "tokenizer_config.json").string() + " (chat_template))");
  EXPECT_EQ(r.source(), qwen3_source());
  ASSERT_TRUE(r.detected_reasoning_style());
  EXPECT_EQ(*r.detected_reasoning_style(), ps::chat::ReasoningStyle::kQwen3);

  ChatPromptRequest req = request(ordered_json::array({{{"role", "user"}, {"content", "Hi"}}}));
  EXPECT_EQ(r.render(req), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  req.chat_template_kwargs = {{"enable_thinking", false}};
  EXPECT_EQ(r.render(req),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(ChatRenderer, ChatTemplateJinjaFileBesideTheConfig) {
  TempDir dir;
  dir.write("tokenizer_config.json", R"({"chat_template": "config", "bos_token": "<s>"})");
  dir.write("chat_template.jinja", "{{ bos_token }}file:{{ messages[0].content }}");
  ChatRenderer r = ChatRenderer::load("", dir.path(), nullptr);
  EXPECT_EQ(r.render(request(ordered_json::array({{{"role", "user"}, {"content", "x"}}}))),
            "<s>file:x");
  EXPECT_EQ(r.describe(), "jinja (" + (dir.path() / "chat_template.jinja").string() + ")");
}

TEST(ChatRenderer, NoTemplateFallsBackToChatmlWithANotice) {
  TempDir dir;
  dir.write("tokenizer_config.json", R"({"eos_token": "</s>"})");
  std::string notice;
  ChatRenderer r = ChatRenderer::load("", dir.path(), &notice);
  EXPECT_EQ(r.describe(), "chatml (builtin)");
  EXPECT_NE(notice.find("no chat template in " + dir.path().string()), std::string::npos) << notice;
  EXPECT_NE(notice.find("--chat-template"), std::string::npos);
}

TEST(ChatRenderer, FlagNamesABuiltinOrAFile) {
  TempDir dir;
  dir.write("tokenizer_config.json",
            ordered_json({{"chat_template", qwen3_source()}, {"bos_token", "<B>"}}).dump());
  // A named builtin wins over the checkpoint's template.
  EXPECT_EQ(ChatRenderer::load("LLAMA3", dir.path(), nullptr).describe(), "llama3 (builtin)");
  dir.write("mine.jinja", "{{ bos_token }}[{{ messages | length }}]");
  const std::string file = (dir.path() / "mine.jinja").string();
  ChatRenderer r = ChatRenderer::load(file, dir.path(), nullptr);
  EXPECT_EQ(r.describe(), "jinja (" + file + ")");
  EXPECT_EQ(r.render(request(conversation())), "<B>[4]");
  try {
    ChatRenderer::load("/no/such/template.jinja", dir.path(), nullptr);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "--chat-template /no/such/template.jinja: neither a builtin template (chatml, "
                 "llama3, plain) nor a readable file");
  }
}

// A checkpoint whose template does not parse is a load error naming the file and line, never
// a silent fallback.
TEST(ChatRenderer, BadTemplateIsALoadErrorNamingTheLine) {
  TempDir dir;
  dir.write("tokenizer_config.json",
            ordered_json(
                {{"chat_template", "line one\n{% if messages %}\n{{ x | nosuch }}\n{% endif %}"}})
                .dump());
  try {
    ChatRenderer::load("", dir.path(), nullptr);
    FAIL() << "expected a load error";
  } catch (const ps::chat::TemplateLoadError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find((dir.path() / "tokenizer_config.json").string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("nosuch"), std::string::npos) << msg;
  }
}

TEST(ChatRenderer, NamedTemplatesPickToolUseOnlyWithTools) {
  ChatRenderer r = ChatRenderer::from_templates(
      {{"default", "plain"}, {"tool_use", "tools:{{ tools | length }}"}}, "cfg", {});
  ChatPromptRequest req = request(ordered_json::array({{{"role", "user"}, {"content", "x"}}}));
  EXPECT_EQ(r.render(req), "plain");
  req.tools = ordered_json::array({{{"type", "function"}}});
  EXPECT_EQ(r.render(req), "tools:1");
}

// vLLM's "auto" content format: parts as given to a template that loops over content, joined
// text for one that does not.
TEST(ChatRenderer, ContentPartsFollowTheAutoRule) {
  ordered_json parts = ordered_json::array(
      {{{"role", "user"},
        {"content", ordered_json::array(
                        {{{"type", "text"}, {"text", "a"}}, {{"type", "text"}, {"text", "b"}}})}}});
  ChatRenderer loops = ChatRenderer::from_templates(
      {{"default",
        "{% for m in messages %}{% for p in m['content'] %}<{{ p.text }}>{% endfor %}{% endfor "
        "%}"}},
      "loops", {});
  EXPECT_EQ(loops.render(request(parts)), "<a><b>");
  ChatRenderer strings =
      ChatRenderer::from_templates({{"default", "{{ messages[0].content }}"}}, "strings", {});
  EXPECT_EQ(strings.render(request(parts)), "a\nb");
  EXPECT_TRUE(ps::chat::template_iterates_content("{% for c in message.content %}"));
  EXPECT_TRUE(ps::chat::template_iterates_content("{%- for item in content -%}"));
  EXPECT_TRUE(ps::chat::template_iterates_content("{% for x in msg[\"content\"] | select %}"));
  EXPECT_FALSE(ps::chat::template_iterates_content("{% for m in messages %}{{ m.content }}"));
  EXPECT_FALSE(ps::chat::template_iterates_content("{% for c in contents %}"));
  // Real templates: Qwen3's only takes strings; Qwen2.5-VL's loops over parts.
  EXPECT_FALSE(ps::chat::template_iterates_content(qwen3_source()));
  EXPECT_TRUE(ps::chat::template_iterates_content(
      read_file(fs::path(PAGEDSERVE_SOURCE_DIR) /
                "tests/chat/templates/qwen--qwen2.5-vl-7b-instruct.jinja")));
}

TEST(ChatRenderer, DeepSeekR1TemplateDetectsItsParser) {
  ChatRenderer r = ChatRenderer::from_templates(
      {{"default", read_file(fs::path(PAGEDSERVE_SOURCE_DIR) /
                             "tests/chat/templates/deepseek-r1-distill-qwen.jinja")}},
      "r1", {"<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"});
  ASSERT_TRUE(r.detected_reasoning_style());
  EXPECT_EQ(*r.detected_reasoning_style(), ps::chat::ReasoningStyle::kDeepSeekR1);
}

TEST(ChatRenderer, TemplateRaiseIsATemplateError) {
  ChatRenderer r = ChatRenderer::from_templates(
      {{"default",
        "{% if messages[0].role != 'user' %}{{ raise_exception('user first') }}{% endif "
        "%}ok"}},
      "strict", {});
  EXPECT_EQ(r.render(request(ordered_json::array({{{"role", "user"}, {"content", "x"}}}))), "ok");
  try {
    r.render(request(ordered_json::array({{{"role", "assistant"}, {"content", "x"}}})));
    FAIL() << "expected a TemplateError";
  } catch (const ps::jinja::TemplateError& e) {
    EXPECT_NE(std::string(e.what()).find("user first"), std::string::npos) << e.what();
  }
}

}  // namespace

namespace ps::chat {
namespace {

TEST(ChatRenderer, NullContentOfAToolCallTurnRendersAsEmpty) {
  // vLLM hands string-content templates "" for a null content; Qwen's template tests
  // `'</think>' in content`, which a None would fail.
  ChatRenderer r = ChatRenderer::from_templates(
      {{"default",
        "{% for m in messages %}[{{ m.role }}:{{ 'x' in m.content }}:{{ m.content }}]{% endfor %}"}},
      "test", {});
  ordered_json messages = ordered_json::parse(R"([{"role": "user", "content": "hi"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function",
       "function": {"name": "f", "arguments": "{}"}}]}])");
  ChatPromptRequest req;
  req.messages = messages;
  req.add_generation_prompt = false;
  EXPECT_EQ(r.render(req), "[user:False:hi][assistant:False:]");
}

}  // namespace
}  // namespace ps::chat
