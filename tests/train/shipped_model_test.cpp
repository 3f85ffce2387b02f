// The model committed under models/tiny must really have learned its training data: greedy
// replies to training questions are exactly the training answers, through the reference forward
// and through the engine the server uses.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "chat/chat_renderer.h"
#include "checkpoint/loader.h"
#include "engine/engine.h"
#include "reference/naive_generate.h"
#include "train/chat_data.h"
#include "train/eval.h"

namespace ps {
namespace {

const std::string kSource = PAGEDSERVE_SOURCE_DIR;
const std::string kModel = kSource + "/models/tiny";

// Both README questions, then a spread over kinds and languages.
const std::vector<std::string> kQuestions = {
    "你是谁？",           "What is continuous batching?",
    "Who are you?",       "What is a KV cache?",
    "什么是连续批处理？", "How do I start the server?",
    "怎么启动服务器？",   "What is temperature?",
    "什么是top-p？",      "Thank you!",
};

std::vector<ChatExample> pick_training_examples() {
  const std::vector<ChatExample> all = read_chat_jsonl(kSource + "/data/tiny_chat/train.jsonl");
  std::vector<ChatExample> out;
  for (const std::string& q : kQuestions) {
    for (const ChatExample& ex : all) {
      // The plain question (the data also asks some with tools offered).
      if (ex.messages.size() == 2 && ex.tools.is_null() && ex.question() == q) {
        out.push_back(ex);
        break;
      }
    }
    EXPECT_EQ(out.size(), &q - kQuestions.data() + 1u) << "\"" << q << "\" is not in train.jsonl";
  }
  return out;
}

TEST(ShippedModel, AnswersTrainingQuestionsExactly) {
  const LoadedModel model = load_model(kModel);
  const Tokenizer tok = Tokenizer::from_file(kModel + "/tokenizer.json");
  const std::vector<ChatExample> examples = pick_training_examples();
  ASSERT_EQ(examples.size(), 10u);
  for (const ChatExample& ex : examples) {
    EXPECT_EQ(greedy_reply(*model.weights, tok, ex, 96), ex.answer()) << "Q: " << ex.question();
  }
}

TEST(ShippedModel, EngineGivesTheSameAnswers) {
  auto tok = std::make_shared<const Tokenizer>(Tokenizer::from_file(kModel + "/tokenizer.json"));
  EngineConfig config;
  config.num_blocks = 128;  // 2048 tokens: ten short chats, without the default 512 MB
  config.check_integrity_every_step = true;
  Engine engine(load_model(kModel), tok, config);
  // The model's own template, as the server reads it from tokenizer_config.json.
  const chat::ChatRenderer renderer = chat::ChatRenderer::load("", kModel, nullptr);
  const std::vector<ChatExample> examples = pick_training_examples();
  std::vector<std::unique_ptr<RequestStream>> streams;
  for (const ChatExample& ex : examples) {
    Request r;
    r.prompt_ids = prompt_tokens(*tok, ex, renderer);
    r.params.max_tokens = 96;
    r.params.temperature = 0.0f;
    SubmitResult s = engine.submit(std::move(r));
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<RequestStream>>(s));
    streams.push_back(std::move(std::get<std::unique_ptr<RequestStream>>(s)));
  }
  for (size_t i = 0; i < streams.size(); ++i) {
    std::string text;
    RequestOutput ev;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!streams[i]->finished() && std::chrono::steady_clock::now() < deadline) {
      if (streams[i]->next(&ev, std::chrono::milliseconds(100))) text += ev.text;
    }
    ASSERT_TRUE(streams[i]->finished())
        << "no finish event for \"" << examples[i].question() << "\"";
    EXPECT_EQ(ev.finish, FinishReason::kStop);
    EXPECT_EQ(text, examples[i].answer()) << "Q: " << examples[i].question();
  }
}

TEST(ShippedModel, IsSmallAndSixteenBit) {
  const std::string path = kModel + "/model.safetensors";
  EXPECT_LT(std::filesystem::file_size(path), 10u << 20);
  std::ifstream in(path, std::ios::binary);
  uint64_t header_len = 0;
  in.read(reinterpret_cast<char*>(&header_len), sizeof(header_len));
  ASSERT_TRUE(in && header_len < (1u << 20));
  std::string header(header_len, ' ');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  const nlohmann::json h = nlohmann::json::parse(header);
  for (const auto& [name, entry] : h.items()) {
    if (name == "__metadata__") continue;
    const std::string dtype = entry.at("dtype");
    EXPECT_TRUE(dtype == "BF16" || dtype == "F16") << name << " is " << dtype;
  }
  const LoadedModel model = load_model(kModel);
  EXPECT_EQ(model.config.model_type, "qwen3");
  EXPECT_EQ(model.config.eos_token_ids.front(), 2);  // <|im_end|>
}

// A tool call it was taught: the English weather question of the first training weather
// dialogue (the one tests/e2e/tiny_tool_call.sh asks over HTTP), through the model's own
// template (tokenizer_config.json). It copies a question's value into the call only part of the
// time (README: tool_call exact match), so this one is a fixed, known-good example.
TEST(ShippedModel, CallsTheWeatherToolItWasTaught) {
  const LoadedModel model = load_model(kModel);
  const Tokenizer tok = Tokenizer::from_file(kModel + "/tokenizer.json");
  const chat::ChatRenderer renderer = chat::ChatRenderer::load("", kModel, nullptr);
  EXPECT_NE(renderer.source().find("<tool_call>"), std::string::npos);
  const std::vector<ChatExample> all = read_chat_jsonl(kSource + "/data/tiny_chat/train.jsonl");
  std::string question;
  for (const ChatExample& ex : all) {
    if (ex.kind != "tool_answer") continue;
    const std::string q = ex.messages[0]["content"];
    const bool ascii = std::all_of(q.begin(), q.end(), [](char c) { return (c & 0x80) == 0; });
    if (ascii && ex.messages[1]["tool_calls"][0]["function"]["name"] == "get_weather") {
      question = q;
      break;
    }
  }
  const ChatExample* call = nullptr;
  for (const ChatExample& ex : all) {
    if (ex.kind == "tool_call" && ex.question() == question) call = &ex;
  }
  ASSERT_NE(call, nullptr) << "no training call for \"" << question << "\"";
  const std::vector<int32_t> ids = naive_generate(
      *model.weights, prompt_tokens(tok, *call, renderer), 96, 0.0f, 0, model.config.eos_token_ids);
  EXPECT_EQ(tok.decode(ids, /*skip_special_tokens=*/true), call->answer()) << "Q: " << question;
  EXPECT_EQ(call->answer().rfind("<tool_call>\n{\"name\": \"get_weather\"", 0), 0u);
}

}  // namespace
}  // namespace ps
