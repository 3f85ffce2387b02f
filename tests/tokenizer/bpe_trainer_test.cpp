// The BPE trainer: output layout, vocab size, determinism and tie-breaking.
#include "tokenizer/bpe_trainer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tokenizer/tokenizer.h"

namespace ps {
namespace {

BpeTrainOptions small_vocab(int32_t vocab_size) {
  BpeTrainOptions options;
  options.vocab_size = vocab_size;
  return options;
}

TEST(BpeTrainer, TinyCorpusReachesTheFullVocab) {
  auto j = nlohmann::json::parse(train_byte_level_bpe(tiny_model_corpus(), {}));
  const auto& vocab = j["model"]["vocab"];
  EXPECT_EQ(vocab.size(), 6400u);
  std::vector<bool> seen(6400, false);
  for (const auto& [token, id] : vocab.items()) {
    ASSERT_LT(id.get<int>(), 6400) << token;
    EXPECT_FALSE(seen[id.get<int>()]) << "id used twice: " << id;
    seen[id.get<int>()] = true;
  }
  EXPECT_EQ(Tokenizer::from_json_text(j.dump(), "tiny").vocab_size(), 6400);
}

TEST(BpeTrainer, WritesTheQwen2Layout) {
  auto j = nlohmann::json::parse(train_byte_level_bpe(tiny_model_corpus(), small_vocab(400)));
  ASSERT_EQ(j["added_tokens"].size(), 3u);
  const char* specials[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(j["added_tokens"][i]["id"], i);
    EXPECT_EQ(j["added_tokens"][i]["content"], specials[i]);
    EXPECT_EQ(j["added_tokens"][i]["special"], true);
  }
  EXPECT_TRUE(j["normalizer"].is_null());
  const auto& steps = j["pre_tokenizer"]["pretokenizers"];
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0]["type"], "Split");
  EXPECT_EQ(steps[0]["behavior"], "Isolated");
  EXPECT_EQ(steps[0]["invert"], false);
  EXPECT_EQ(steps[0]["pattern"]["Regex"].get<std::string>().substr(0, 30),
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[");
  EXPECT_EQ(steps[1]["type"], "ByteLevel");
  EXPECT_EQ(steps[1]["use_regex"], false);
  EXPECT_EQ(j["post_processor"]["type"], "ByteLevel");
  EXPECT_EQ(j["decoder"]["type"], "ByteLevel");
  const auto& model = j["model"];
  EXPECT_EQ(model["type"], "BPE");
  EXPECT_EQ(model["byte_fallback"], false);
  EXPECT_EQ(model["ignore_merges"], false);
  // Bytes follow the specials in GPT-2 order: '!' first, the remapped control bytes last.
  EXPECT_EQ(model["vocab"]["!"], 3);
  EXPECT_EQ(model["vocab"]["~"], 3 + 93);
  EXPECT_EQ(model["vocab"]["Ā"], 3 + 188);  // byte 0x00
  EXPECT_EQ(model["vocab"]["Ġ"], 3 + 188 + 32);
  ASSERT_EQ(model["merges"].size(), 400u - 259u);
  for (const auto& m : model["merges"]) {
    const std::string s = m.get<std::string>();
    ASSERT_EQ(std::count(s.begin(), s.end(), ' '), 1) << s;
    std::string merged = s.substr(0, s.find(' ')) + s.substr(s.find(' ') + 1);
    EXPECT_TRUE(model["vocab"].contains(merged)) << s;
  }
}

TEST(BpeTrainer, IsDeterministic) {
  const std::string corpus = tiny_model_corpus().substr(0, 100000);
  EXPECT_EQ(train_byte_level_bpe(corpus, small_vocab(1500)),
            train_byte_level_bpe(corpus, small_vocab(1500)));
}

TEST(BpeTrainer, MostFrequentPairFirstTiesToSmallerIds) {
  // Words "cdcd" and " abab": "a b" and "c d" both occur twice; 'a' < 'c' decides.
  for (std::string corpus : {"cdcd abab", "abab cdcd"}) {
    auto j = nlohmann::json::parse(train_byte_level_bpe(corpus, small_vocab(261)));
    EXPECT_EQ(j["model"]["merges"], nlohmann::json({"a b", "c d"})) << corpus;
  }
}

TEST(BpeTrainer, StopsWhenPairsRunOut) {
  // "ab", " ab", " ab": "a b" (3 times), then "Ġ ab" (twice), then nothing reaches 2.
  auto j = nlohmann::json::parse(train_byte_level_bpe("ab ab ab", small_vocab(6400)));
  EXPECT_EQ(j["model"]["merges"], nlohmann::json({"a b", "Ġ ab"}));
  EXPECT_EQ(j["model"]["vocab"].size(), 261u);
  Tokenizer t = Tokenizer::from_json_text(j.dump(), "small");
  EXPECT_EQ(t.encode("ab ab"), (std::vector<int32_t>{259, 260}));
}

TEST(BpeTrainer, SpecialTokensInTheCorpusAreNotLearned) {
  auto j = nlohmann::json::parse(
      train_byte_level_bpe("<|im_start|><|im_start|><|im_start|>", small_vocab(300)));
  EXPECT_TRUE(j["model"]["merges"].empty());
}

TEST(BpeTrainer, RejectsAVocabTooSmallForTheBytes) {
  EXPECT_THROW(train_byte_level_bpe("abc", small_vocab(100)), std::runtime_error);
}

}  // namespace
}  // namespace ps
