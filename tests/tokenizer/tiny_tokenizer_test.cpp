// The tiny model's trained tokenizer: round trips over varied text, special tokens, bad UTF-8,
// and concurrent use.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <thread>

#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tokenizer.h"

namespace ps {
namespace {

const Tokenizer& tiny() {
  static const Tokenizer t =
      Tokenizer::from_json_text(train_byte_level_bpe(tiny_model_corpus(), {}), "tiny");
  return t;
}

std::vector<std::string> varied_strings() {
  std::vector<std::string> v = {
      "",
      "Hello, world!",
      "你好，我是谁？",
      "   leading and trailing   ",
      "tabs\tand\nnewlines\r\n\n\n",
      "Café crème brûlée, Zoë, Straße",
      "decomposed e\xcc\x81 and a\xcc\x88",
      "👨‍👩‍👧‍👦 🏳️‍🌈 👍🏽 1️⃣",
      "12345678901234567890 3.14 -1e9",
      "def f(x):\n    return x ** 2  # square\n",
      "std::vector<int> v{1, 2, 3}; v.push_back(4);",
      "<|im_start|>user\n你好<|im_end|>\n<|im_start|>assistant\n",
      "Ελληνικά Русский العربية עברית हिन्दी ภาษาไทย 한국어 日本語",
      std::string("nul\0inside", 10),
      "\xef\xbb\xbf"
      "BOM first",
  };
  // Every line of the cross-check inputs, as written (escapes stay literal here).
  std::ifstream in(std::string(PAGEDSERVE_SOURCE_DIR) + "/tests/tokenizer/crosscheck_inputs.txt");
  std::string line;
  while (std::getline(in, line)) v.push_back(line);
  return v;
}

TEST(TinyTokenizer, RoundTripsVariedText) {
  auto strings = varied_strings();
  ASSERT_GT(strings.size(), 200u) << "crosscheck_inputs.txt was not found";
  for (const std::string& s : strings) {
    auto ids = tiny().encode(s);
    EXPECT_EQ(tiny().decode(ids), s);
    for (int32_t id : ids) {
      ASSERT_GE(id, 0);
      ASSERT_LT(id, tiny().vocab_size());
    }
  }
}

TEST(TinyTokenizer, SpecialTokensMapToTheirIds) {
  const Tokenizer& t = tiny();
  ASSERT_EQ(t.token_to_id("<|endoftext|>"), 0);
  ASSERT_EQ(t.token_to_id("<|im_start|>"), 1);
  ASSERT_EQ(t.token_to_id("<|im_end|>"), 2);
  auto ids = t.encode("<|im_start|>user\nhi<|im_end|><|endoftext|>");
  ASSERT_GE(ids.size(), 4u);
  EXPECT_EQ(ids.front(), 1);
  EXPECT_EQ(ids[ids.size() - 2], 2);
  EXPECT_EQ(ids.back(), 0);
  EXPECT_EQ(t.decode(ids, /*skip_special_tokens=*/true), "user\nhi");
  // Specials are never produced from plain text that merely resembles them.
  for (int32_t id : t.encode("<|im_start| <|im_end <|endoftext")) EXPECT_FALSE(t.is_special(id));
}

TEST(TinyTokenizer, InvalidUtf8NeverCrashesAndRoundTrips) {
  const Tokenizer& t = tiny();
  for (std::string s : {std::string("\xff\xfe"), std::string("ab\xc3"), std::string("\xc3 x"),
                        std::string("\xed\xa0\x80 surrogate"), std::string("\xc0\xaf overlong"),
                        std::string("\xf4\x90\x80\x80 too big"), std::string("你\xe5\xa5")}) {
    EXPECT_EQ(t.decode(t.encode(s)), s);
  }
  std::mt19937 rng(42);
  for (int i = 0; i < 500; ++i) {
    std::string s(rng() % 64, '\0');
    for (char& c : s) c = static_cast<char>(rng() & 0xFF);
    EXPECT_EQ(t.decode(t.encode(s)), s);
  }
}

TEST(TinyTokenizer, CompressesTheTrainingText) {
  const std::string& corpus = tiny_model_corpus();
  auto ids = tiny().encode(corpus);
  EXPECT_EQ(tiny().decode(ids), corpus);
  // Bytes per token: a byte-level tokenizer without merges would give 1.0.
  double ratio = static_cast<double>(corpus.size()) / static_cast<double>(ids.size());
  EXPECT_GT(ratio, 3.0) << corpus.size() << " bytes -> " << ids.size() << " tokens";
}

TEST(TinyTokenizer, ConcurrentEncodesAgree) {
  auto strings = varied_strings();
  std::vector<std::vector<int32_t>> expected;
  for (const auto& s : strings) expected.push_back(tiny().encode(s));
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int round = 0; round < 5; ++round) {
        for (size_t i = 0; i < strings.size(); ++i) {
          if (tiny().encode(strings[(i + k * 7) % strings.size()]) !=
              expected[(i + k * 7) % strings.size()]) {
            ++failures[k];
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int k = 0; k < 4; ++k) EXPECT_EQ(failures[k], 0) << "thread " << k;
}

}  // namespace
}  // namespace ps
