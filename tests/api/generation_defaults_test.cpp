// generation_config.json fills the sampling fields a request leaves out; fields the request
// sends win; bad files fail at load naming the file and field.
#include "openai/generation_defaults.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "openai/openai_request.h"

namespace ps {
namespace {
namespace fs = std::filesystem;

class GenerationConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ps_gen_config_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& text) {
    std::ofstream(dir_ / "generation_config.json") << text;
    return (dir_ / "generation_config.json").string();
  }
  std::string error_of(const std::string& text) {
    try {
      GenerationDefaults::from_file(write(text));
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(GenerationConfigFile, ReadsTheFieldsVllmUses) {
  // A Qwen3-style file: do_sample, bos/eos ids and the transformers version are not defaults.
  GenerationDefaults d = GenerationDefaults::from_file(write(R"({
      "bos_token_id": 151643, "do_sample": true, "eos_token_id": [151645, 151643],
      "pad_token_id": 151643, "temperature": 0.6, "top_k": 20, "top_p": 0.95,
      "min_p": 0.05, "repetition_penalty": 1.1, "max_new_tokens": 512,
      "transformers_version": "4.51.0"})"));
  EXPECT_FLOAT_EQ(d.temperature.value(), 0.6f);
  EXPECT_EQ(d.top_k.value(), 20);
  EXPECT_FLOAT_EQ(d.top_p.value(), 0.95f);
  EXPECT_FLOAT_EQ(d.min_p.value(), 0.05f);
  EXPECT_FLOAT_EQ(d.repetition_penalty.value(), 1.1f);
  EXPECT_EQ(d.max_new_tokens.value(), 512);
  EXPECT_EQ(d.describe(),
            "temperature=0.6 top_p=0.95 top_k=20 min_p=0.05 repetition_penalty=1.1 "
            "max_new_tokens=512");
  EXPECT_NE(d.source.find("generation_config.json"), std::string::npos);
}

TEST_F(GenerationConfigFile, MissingFileOrNoSamplingFieldsGivesNone) {
  GenerationDefaults none = GenerationDefaults::from_file((dir_ / "absent.json").string());
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.describe(), "none");
  EXPECT_TRUE(
      GenerationDefaults::from_file(write(R"({"bos_token_id": 1, "temperature": null})")).empty());
}

TEST_F(GenerationConfigFile, BadValuesNameTheFileAndField) {
  for (const auto& [text, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"temperature": 3})", "temperature"},
           {R"({"top_p": 0})", "top_p"},
           {R"({"top_k": -5})", "top_k"},
           {R"({"top_k": 2.5})", "top_k"},
           {R"({"max_new_tokens": 0})", "max_new_tokens"},
           {R"({"repetition_penalty": "high"})", "repetition_penalty"},
           {R"({"temperature": )", "malformed JSON"}}) {
    std::string message = error_of(text);
    EXPECT_NE(message.find("generation_config.json"), std::string::npos) << text << message;
    EXPECT_NE(message.find(field), std::string::npos) << text << " -> " << message;
  }
}

RequestLimits with_defaults() {
  RequestLimits l;
  l.vocab_size = 100;
  l.generation_defaults.temperature = 0.6f;
  l.generation_defaults.top_p = 0.9f;
  l.generation_defaults.top_k = 500;  // above the vocabulary: clamped to it
  l.generation_defaults.min_p = 0.1f;
  l.generation_defaults.repetition_penalty = 1.2f;
  l.generation_defaults.max_new_tokens = 64;
  return l;
}

OpenAiRequest parse(const std::string& body, Endpoint e, const RequestLimits& l) {
  auto r = parse_openai_request(body, e, l);
  EXPECT_TRUE(std::holds_alternative<OpenAiRequest>(r)) << body;
  return std::holds_alternative<OpenAiRequest>(r) ? std::get<OpenAiRequest>(r) : OpenAiRequest{};
}

const char* kChat = R"({"messages":[{"role":"user","content":"hi"}]})";

TEST(GenerationDefaultsApplied, FillWhatTheRequestLeavesOut) {
  OpenAiRequest r = parse(kChat, Endpoint::kChat, with_defaults());
  EXPECT_FLOAT_EQ(r.params.temperature, 0.6f);
  EXPECT_FLOAT_EQ(r.params.top_p, 0.9f);
  EXPECT_EQ(r.params.top_k, 100);
  EXPECT_FLOAT_EQ(r.params.min_p, 0.1f);
  EXPECT_FLOAT_EQ(r.params.repetition_penalty, 1.2f);
  EXPECT_EQ(r.params.max_tokens, 64);
  EXPECT_FALSE(r.max_tokens_given);  // still cut to the context later, never an error
  // Completions' own default (16) is smaller than max_new_tokens, and stays.
  EXPECT_EQ(parse(R"({"prompt":"hi"})", Endpoint::kCompletion, with_defaults()).params.max_tokens,
            16);
}

TEST(GenerationDefaultsApplied, FieldsTheRequestSendsWin) {
  OpenAiRequest r = parse(
      R"({"messages":[{"role":"user","content":"hi"}], "temperature": 0, "top_p": 1,
          "top_k": -1, "min_p": 0, "repetition_penalty": 1, "max_tokens": 200})",
      Endpoint::kChat, with_defaults());
  EXPECT_FLOAT_EQ(r.params.temperature, 0.0f);
  EXPECT_FLOAT_EQ(r.params.top_p, 1.0f);
  EXPECT_EQ(r.params.top_k, -1);
  EXPECT_FLOAT_EQ(r.params.min_p, 0.0f);
  EXPECT_FLOAT_EQ(r.params.repetition_penalty, 1.0f);
  EXPECT_EQ(r.params.max_tokens, 200);
  EXPECT_TRUE(r.max_tokens_given);
}

TEST(GenerationDefaultsApplied, NoDefaultsKeepOpenAisOwn) {
  RequestLimits l;
  l.vocab_size = 100;
  OpenAiRequest r = parse(kChat, Endpoint::kChat, l);
  SamplingParams fresh;
  EXPECT_FLOAT_EQ(r.params.temperature, fresh.temperature);
  EXPECT_FLOAT_EQ(r.params.top_p, fresh.top_p);
  EXPECT_EQ(r.params.top_k, fresh.top_k);
}

}  // namespace
}  // namespace ps
