#include "train/chat_data.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/train/train_test_util.h"
#include "train/eval.h"

namespace ps {
namespace {

using testutil::TempDir;

std::string write_file(const TempDir& dir, const std::string& text) {
  const std::string path = dir.file("data.jsonl");
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(ChatData, ReadsBothSchemas) {
  TempDir dir;
  const std::string path = write_file(
      dir,
      "{\"question\": \"你是谁？\", \"answer\": \"我是Tiny。\", \"kind\": \"topic\"}\n"
      "\n"
      "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", "
      "\"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"Hello!\"}]}\n");
  const std::vector<ChatExample> ex = read_chat_jsonl(path);
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0].question(), "你是谁？");
  EXPECT_EQ(ex[0].answer(), "我是Tiny。");
  EXPECT_EQ(ex[0].kind, "topic");
  EXPECT_EQ(ex[1].question(), "Hi");
  EXPECT_EQ(ex[1].answer(), "Hello!");
  ASSERT_EQ(ex[1].prompt_messages().size(), 2u);
  EXPECT_EQ(ex[1].prompt_messages()[0]["role"], "system");
}

TEST(ChatData, BadLinesNameFileAndLine) {
  TempDir dir;
  const std::string path =
      write_file(dir, "{\"question\": \"a\", \"answer\": \"b\"}\n{\"question\": \"a\"}\n");
  try {
    read_chat_jsonl(path);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("answer"), std::string::npos) << e.what();
  }
  const std::string last_user =
      write_file(dir,
                 "{\"messages\": [{\"role\": \"assistant\", \"content\": \"x\"}, "
                 "{\"role\": \"user\", \"content\": \"y\"}]}\n");
  EXPECT_THROW(read_chat_jsonl(last_user), std::runtime_error);
  EXPECT_THROW(read_chat_jsonl(write_file(dir, "\n")), std::runtime_error);
  EXPECT_THROW(read_chat_jsonl(dir.file("missing.jsonl")), std::runtime_error);
}

TEST(ChatData, TrainsOnlyTheReplyAndItsEnd) {
  const std::vector<ChatExample> examples = traintest::small_examples();
  const Tokenizer tok = traintest::small_tokenizer(examples);
  const ChatExample& ex = examples[1];  // 你是谁？
  const TokenizedExample t = tokenize_example(tok, ex, 256);
  // The pieces are encoded apart; they must equal the whole conversation encoded at once, or the
  // model would be trained on token sequences the server never produces.
  const std::string full =
      "<|im_start|>user\n你是谁？<|im_end|>\n<|im_start|>assistant\n我是一个小模型。<|im_end|>";
  EXPECT_EQ(t.tokens, tok.encode(full));
  ASSERT_EQ(t.targets.size(), t.tokens.size());

  const std::vector<int32_t> prompt = prompt_tokens(tok, ex);
  const size_t n = prompt.size();
  for (size_t i = 0; i + 1 < n; ++i) EXPECT_EQ(t.targets[i], kIgnoreTarget) << i;
  std::vector<int32_t> trained;
  for (size_t i = n - 1; i + 1 < t.tokens.size(); ++i) {
    EXPECT_EQ(t.targets[i], t.tokens[i + 1]);
    trained.push_back(t.targets[i]);
  }
  EXPECT_EQ(t.targets.back(), kIgnoreTarget);
  EXPECT_EQ(trained.back(), 2);  // <|im_end|>: the model learns to stop
  EXPECT_EQ(tok.decode(trained, true), "我是一个小模型。");
}

TEST(ChatData, RefusesExamplesOverTheLengthLimit) {
  const std::vector<ChatExample> examples = traintest::small_examples();
  const Tokenizer tok = traintest::small_tokenizer(examples);
  EXPECT_THROW(tokenize_example(tok, examples[3], 8), std::runtime_error);
}

TEST(ChatData, RefusesSpecialTokensInsideMessages) {
  const std::vector<ChatExample> examples = traintest::small_examples();
  const Tokenizer tok = traintest::small_tokenizer(examples);
  const ChatExample bad = ChatExample::from_turns(
      {{"user", "What is ChatML?"}, {"assistant", "It ends turns with <|im_end|>."}}, "");
  EXPECT_THROW(tokenize_example(tok, bad, 256), std::runtime_error);
  const ChatExample bad_question =
      ChatExample::from_turns({{"user", "<|im_start|>system"}, {"assistant", "No."}}, "");
  EXPECT_THROW(tokenize_example(tok, bad_question, 256), std::runtime_error);
}

TEST(CharSimilarity, CountsCodePoints) {
  EXPECT_DOUBLE_EQ(char_similarity("", ""), 1.0);
  EXPECT_DOUBLE_EQ(char_similarity("abc", "abc"), 1.0);
  EXPECT_DOUBLE_EQ(char_similarity("abc", ""), 0.0);
  EXPECT_DOUBLE_EQ(char_similarity("kitten", "sitting"), 1.0 - 3.0 / 7.0);
  // One Chinese character differs out of four: 0.75, not 1 - 3/12 bytes.
  EXPECT_DOUBLE_EQ(char_similarity("你好世界", "你好天界"), 0.75);
  EXPECT_DOUBLE_EQ(char_similarity("你好", "你好!"), 1.0 - 1.0 / 3.0);
  // A stray byte is one unit and never equals a real character.
  EXPECT_DOUBLE_EQ(char_similarity("a\xff", "a\xc3\xbf"), 0.5);
}

}  // namespace
}  // namespace ps
