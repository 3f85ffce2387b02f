// Our C++ chat templates must render exactly what Jinja2 renders from the reference templates,
// so the model sees the prompt format it was trained on. The reference is Python's jinja2
// (Debian package python3-jinja2), run as /usr/bin/python3.
#include "chat/chat_template.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace ps {
namespace {

using nlohmann::json;

// Reference templates in the shape the model families ship them.
const char* kChatMLJinja =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";

const char* kLlama3Jinja =
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
    "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | "
    "trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}"
    "{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

const char* kPlainJinja =
    "{% for message in messages %}{% if message['role'] == 'user' %}{{ '用户:' + "
    "message['content'] + '\\n' }}{% elif message['role'] == 'assistant' %}{{ '助手:' + "
    "message['content'] + '\\n' }}{% else %}{{ message['content'] + '\\n' }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ '助手:' }}{% endif %}";

const char* kRenderPy = R"PY(
import json, sys
try:
    import jinja2
except ImportError:
    print("NO_JINJA2", end="")
    sys.exit(3)
spec = json.load(open(sys.argv[1], encoding="utf-8"))
env = jinja2.Environment(keep_trailing_newline=True)
out = env.from_string(spec["template"]).render(
    messages=spec["messages"], add_generation_prompt=spec["add_generation_prompt"],
    bos_token="<|begin_of_text|>")
sys.stdout.write(json.dumps(out))
)PY";

std::string jinja_render(const std::string& tmpl, const std::vector<ChatMessage>& messages,
                         bool add_generation_prompt) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("ps_chat_template_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  json spec = {{"template", tmpl}, {"add_generation_prompt", add_generation_prompt}};
  spec["messages"] = json::array();
  for (const auto& m : messages)
    spec["messages"].push_back({{"role", m.role}, {"content", m.content}});
  std::ofstream(dir / "spec.json") << spec.dump();
  std::ofstream(dir / "render.py") << kRenderPy;
  std::string cmd =
      "/usr/bin/python3 " + (dir / "render.py").string() + " " + (dir / "spec.json").string();
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "POPEN_FAILED";
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  fs::remove_all(dir);
  if (out == "NO_JINJA2") {
    ADD_FAILURE() << "python3 jinja2 is missing: apt-get install python3-jinja2";
    return "";
  }
  if (rc != 0) {
    ADD_FAILURE() << "jinja2 render failed (" << rc << "): " << out;
    return "";
  }
  return json::parse(out).get<std::string>();
}

std::vector<std::vector<ChatMessage>> conversations() {
  return {
      {{"user", "hi"}},
      {{"system", "You are terse."}, {"user", "2+2?"}},
      {{"system", "  padded system \n"},
       {"user", "line one\nline two"},
       {"assistant", "  an answer with spaces  "},
       {"user", "{{ not a template }} {% raw %} <|im_end|>"}},
      {{"user", "中文 и русский, emoji 🙂"}, {"assistant", ""}, {"user", "\t"}},
  };
}

void expect_matches_jinja(ChatTemplateKind kind, const char* jinja) {
  ChatTemplate t(kind);
  for (const auto& conv : conversations()) {
    for (bool gen : {true, false}) {
      EXPECT_EQ(t.render(conv, gen), jinja_render(jinja, conv, gen))
          << t.name() << " add_generation_prompt=" << gen << " first: " << conv[0].content;
    }
  }
}

TEST(ChatTemplate, ChatMLMatchesJinja) {
  expect_matches_jinja(ChatTemplateKind::kChatML, kChatMLJinja);
}
TEST(ChatTemplate, Llama3MatchesJinja) {
  expect_matches_jinja(ChatTemplateKind::kLlama3, kLlama3Jinja);
}
TEST(ChatTemplate, PlainMatchesJinja) {
  expect_matches_jinja(ChatTemplateKind::kPlain, kPlainJinja);
}

TEST(ChatTemplate, ChatMLLiteral) {
  ChatTemplate t(ChatTemplateKind::kChatML);
  EXPECT_EQ(t.render({{"system", "s"}, {"user", "u"}}, true),
            "<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nu<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplate, PlainLiteral) {
  ChatTemplate t(ChatTemplateKind::kPlain);
  EXPECT_EQ(t.render({{"user", "你好"}}, true), "用户:你好\n助手:");
}

TEST(ChatTemplate, FromName) {
  EXPECT_EQ(ChatTemplate::from_name("ChatML")->kind(), ChatTemplateKind::kChatML);
  EXPECT_EQ(ChatTemplate::from_name("llama3")->kind(), ChatTemplateKind::kLlama3);
  EXPECT_EQ(ChatTemplate::from_name("plain")->kind(), ChatTemplateKind::kPlain);
  EXPECT_FALSE(ChatTemplate::from_name("jinja").has_value());
  EXPECT_EQ(ChatTemplate::from_name("plain")->name(), std::string("plain"));
}

}  // namespace
}  // namespace ps
