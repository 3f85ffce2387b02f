// Reading a checkpoint's chat template as transformers does, on real files in a temp dir.
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "chat/template_source.h"
#include "tests/chat/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using ps::chat::choose_template;
using ps::chat::read_checkpoint_templates;
using ps::chat::TemplateLoadError;

// Each test's own directory, named after this file's tests.
struct TempDir : ps::testing_util::TempDir {
  TempDir() : ps::testing_util::TempDir("pagedserve_chat_") {}
};

std::string load_error(const fs::path& dir) {
  try {
    read_checkpoint_templates(dir);
  } catch (const TemplateLoadError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TemplateSource, StringTemplateAndAddedTokenSpecials) {
  TempDir d;
  d.write("tokenizer_config.json", R"({
    "bos_token": {"__type": "AddedToken", "content": "<｜begin▁of▁sentence｜>", "lstrip": false},
    "eos_token": "<|im_end|>",
    "chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}"})");
  auto t = read_checkpoint_templates(d.path());
  EXPECT_EQ(t.bos_token, "<｜begin▁of▁sentence｜>");
  EXPECT_EQ(t.eos_token, "<|im_end|>");
  ASSERT_EQ(t.templates.size(), 1u);
  EXPECT_EQ(*choose_template(t, "", false),
            "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}");
  EXPECT_NE(t.origin.find("tokenizer_config.json"), std::string::npos);
}

TEST(TemplateSource, NamedListPicksDefaultToolUseOrTheRequestedOne) {
  TempDir d;
  d.write("tokenizer_config.json", R"({"chat_template": [
    {"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}, {"name": "rag", "template": "R"}]})");
  auto t = read_checkpoint_templates(d.path());
  EXPECT_EQ(*choose_template(t, "", false), "D");
  EXPECT_EQ(*choose_template(t, "", true), "T");
  EXPECT_EQ(*choose_template(t, "rag", true), "R");
  try {
    choose_template(t, "nope", false);
    FAIL();
  } catch (const TemplateLoadError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "no chat template named 'nope' (it has: default, rag, tool_use)"),
              std::string::npos);
  }
}

TEST(TemplateSource, SeveralNamedTemplatesWithoutDefaultNeedAName) {
  TempDir d;
  d.write("tokenizer_config.json",
          R"({"chat_template": [{"name": "a", "template": "A"}, {"name": "b", "template": "B"}]})");
  auto t = read_checkpoint_templates(d.path());
  EXPECT_THROW(choose_template(t, "", false), TemplateLoadError);
  EXPECT_EQ(*choose_template(t, "b", false), "B");
}

TEST(TemplateSource, ChatTemplateJinjaFileWinsOverTheConfig) {
  TempDir d;
  d.write("tokenizer_config.json", R"({"chat_template": "from config", "eos_token": "</s>"})");
  d.write("chat_template.jinja", "from file\n");
  auto t = read_checkpoint_templates(d.path());
  EXPECT_EQ(*choose_template(t, "", false), "from file\n");
  EXPECT_EQ(t.eos_token, "</s>");
  EXPECT_NE(t.origin.find("chat_template.jinja"), std::string::npos);
}

TEST(TemplateSource, JinjaFileAloneIsEnough) {
  TempDir d;
  d.write("chat_template.jinja", "only file");
  auto t = read_checkpoint_templates(d.path());
  EXPECT_EQ(*choose_template(t, "", false), "only file");
  EXPECT_EQ(t.bos_token, "");
}

TEST(TemplateSource, NoTemplateIsEmptyNotAGuess) {
  TempDir d;
  d.write("tokenizer_config.json", R"({"eos_token": "</s>", "chat_template": null})");
  auto t = read_checkpoint_templates(d.path());
  EXPECT_TRUE(t.templates.empty());
  EXPECT_FALSE(choose_template(t, "", false).has_value());
  TempDir empty;
  EXPECT_TRUE(read_checkpoint_templates(empty.path()).templates.empty());
}

TEST(TemplateSource, MalformedConfigsNameTheFile) {
  TempDir d;
  d.write("tokenizer_config.json", "{not json");
  EXPECT_NE(load_error(d.path()).find("tokenizer_config.json: not valid JSON"), std::string::npos);
  d.write("tokenizer_config.json", R"({"chat_template": 5})");
  EXPECT_NE(
      load_error(d.path()).find("chat_template must be a string or a list of {name, template}"),
      std::string::npos);
  d.write("tokenizer_config.json", R"({"chat_template": [{"name": "x"}]})");
  EXPECT_NE(load_error(d.path()).find("entries must be"), std::string::npos);
  d.write("tokenizer_config.json", R"({"bos_token": 7})");
  EXPECT_NE(load_error(d.path()).find("bos_token must be a string or an object with \"content\""),
            std::string::npos);
}

TEST(TemplateSource, ParseErrorNamesFileAndLine) {
  try {
    ps::chat::parse_template("ok\n{% if messages %}\n{{ x | nope }}{% endif %}",
                             "ckpt/chat_template.jinja");
    FAIL();
  } catch (const TemplateLoadError& e) {
    EXPECT_EQ(std::string(e.what()),
              "ckpt/chat_template.jinja: line 3, column 8: No filter named 'nope'.");
  }
}

TEST(TemplateSource, TemplateFileFlag) {
  TempDir d;
  d.write("mine.jinja", "{{ messages|length }}");
  EXPECT_EQ(ps::chat::read_template_file(d.path() / "mine.jinja"), "{{ messages|length }}");
  EXPECT_THROW(ps::chat::read_template_file(d.path() / "missing.jinja"), TemplateLoadError);
}

}  // namespace
