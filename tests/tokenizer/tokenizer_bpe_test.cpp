// Merge order, both merge spellings, ignore_merges and added tokens, on small hand-built files.
#include <gtest/gtest.h>

#include "tests/tokenizer/tokenizer_json_builder.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"

namespace ps {
namespace {

using test::JsonBuilder;

std::vector<int32_t> bytes_of(const std::string& s) {
  std::vector<int32_t> ids;
  for (unsigned char c : s) ids.push_back(c);
  return ids;
}

TEST(ByteLevel, TableMatchesGpt2Ranges) {
  const auto& chars = byte_level_chars();
  for (int b = 0; b < 256; ++b) {
    EXPECT_EQ(chars[b], test::spell_byte(static_cast<unsigned char>(b))) << "byte " << b;
    EXPECT_EQ(byte_level_decode(chars[b]), std::string(1, static_cast<char>(b)));
  }
  EXPECT_EQ(chars[' '], "Ġ");
  EXPECT_EQ(chars['\n'], "Ċ");
  EXPECT_EQ(chars['A'], "A");
  // A string with a character outside the alphabet is taken literally.
  EXPECT_EQ(byte_level_decode("a€b"), "a€b");
}

TEST(Tokenizer, NoMergesGivesOneIdPerByte) {
  Tokenizer t = Tokenizer::from_json_text(JsonBuilder{}.build(), "test");
  std::string text = "Hi 你好\n";
  EXPECT_EQ(t.encode(text), bytes_of(text));
  EXPECT_EQ(t.decode(t.encode(text)), text);
  EXPECT_EQ(t.vocab_size(), 256);
}

TEST(Tokenizer, LowestRankMergesFirst) {
  JsonBuilder b;
  b.merges = {{"b", "c"}, {"a", "b"}, {"a", "bc"}};
  Tokenizer t = Tokenizer::from_json_text(b.build(), "test");
  // "b c" outranks "a b", so "abc" becomes a + bc, then abc.
  EXPECT_EQ(t.encode("abc"), std::vector<int32_t>{JsonBuilder::merged_id(2)});
  EXPECT_EQ(t.encode("ab"), std::vector<int32_t>{JsonBuilder::merged_id(1)});

  JsonBuilder only_two;
  only_two.merges = {{"b", "c"}, {"a", "b"}};
  Tokenizer t2 = Tokenizer::from_json_text(only_two.build(), "test");
  EXPECT_EQ(t2.encode("abc"), (std::vector<int32_t>{'a', JsonBuilder::merged_id(0)}));
}

TEST(Tokenizer, EqualRanksMergeLeftmostFirst) {
  JsonBuilder b;
  b.merges = {{"a", "a"}};
  Tokenizer t = Tokenizer::from_json_text(b.build(), "test");
  int32_t aa = JsonBuilder::merged_id(0);
  EXPECT_EQ(t.encode("aaa"), (std::vector<int32_t>{aa, 'a'}));
  EXPECT_EQ(t.encode("aaaaa"), (std::vector<int32_t>{aa, aa, 'a'}));
}

TEST(Tokenizer, MergesNeverCrossPreTokens) {
  JsonBuilder b;
  b.merges = {{"o", " "}, {" ", "w"}};
  Tokenizer t = Tokenizer::from_json_text(b.build(), "test");
  // The Split regex cuts "hello world" into "hello" | " world": "o " must not merge.
  std::vector<int32_t> expected = bytes_of("hello");
  expected.push_back(JsonBuilder::merged_id(1));
  for (char c : std::string("orld")) expected.push_back(c);
  EXPECT_EQ(t.encode("hello world"), expected);
}

TEST(Tokenizer, StringAndPairMergeFormsAgree) {
  JsonBuilder b;
  b.merges = {{"t", "h"},       {"th", "e"},          {" ", "the"},
              {"\xe4", "\xbd"}, {"\xe4\xbd", "\xa0"}, {" ", "\n"}};
  Tokenizer strings = Tokenizer::from_json_text(b.build(), "strings");
  b.pair_form = true;
  Tokenizer pairs = Tokenizer::from_json_text(b.build(), "pairs");
  for (std::string text : {"the theme", "你好 the", "x \n the", "", "thethe the"}) {
    EXPECT_EQ(strings.encode(text), pairs.encode(text)) << text;
    EXPECT_EQ(pairs.decode(pairs.encode(text)), text);
  }
  EXPECT_EQ(pairs.encode(" the"), std::vector<int32_t>{JsonBuilder::merged_id(2)});
  EXPECT_EQ(pairs.encode("你"), std::vector<int32_t>{JsonBuilder::merged_id(4)});
}

TEST(Tokenizer, IgnoreMergesMapsWholeVocabWords) {
  JsonBuilder b;
  b.merges = {{"a", "b"}};
  b.extra_vocab = {"abcd"};  // no merge builds it
  const int32_t abcd = 257;
  Tokenizer with_merges = Tokenizer::from_json_text(b.build(), "test");
  EXPECT_EQ(with_merges.encode("abcd"), (std::vector<int32_t>{256, 'c', 'd'}));
  b.ignore_merges = true;
  Tokenizer ignoring = Tokenizer::from_json_text(b.build(), "test");
  EXPECT_EQ(ignoring.encode("abcd"), std::vector<int32_t>{abcd});
  EXPECT_EQ(ignoring.encode("abcde"), (std::vector<int32_t>{256, 'c', 'd', 'e'}));
  EXPECT_EQ(ignoring.decode({abcd}), "abcd");
}

TEST(Tokenizer, AddedTokensMatchBeforePreTokenizationLongestFirst) {
  JsonBuilder b;
  b.merges = {{"<", "|"}};
  b.added_tokens = {test::added(300, "<|im|>"), test::added(301, "<|im|>end"),
                    test::added(302, "[plain]", /*special=*/false)};
  Tokenizer t = Tokenizer::from_json_text(b.build(), "test");
  EXPECT_EQ(t.encode("<|im|>"), std::vector<int32_t>{300});
  EXPECT_EQ(t.encode("<|im|>end"), std::vector<int32_t>{301});
  EXPECT_EQ(t.encode("a<|im|>b"), (std::vector<int32_t>{'a', 300, 'b'}));
  EXPECT_EQ(t.encode("<|im|><|im|>"), (std::vector<int32_t>{300, 300}));
  // Partial contents are plain text: "<|" merges, the rest is bytes.
  std::vector<int32_t> partial{256, 'i', 'm', '|'};
  EXPECT_EQ(t.encode("<|im|"), partial);
  // Non-special added tokens are matched too but kept by skip_special_tokens.
  auto ids = t.encode("x[plain]<|im|>y");
  EXPECT_EQ(ids, (std::vector<int32_t>{'x', 302, 300, 'y'}));
  EXPECT_EQ(t.decode(ids), "x[plain]<|im|>y");
  EXPECT_EQ(t.decode(ids, /*skip_special_tokens=*/true), "x[plain]y");
  EXPECT_TRUE(t.is_special(300));
  EXPECT_FALSE(t.is_special(302));
  EXPECT_FALSE(t.is_special('a'));
  EXPECT_EQ(t.vocab_size(), 303);
  EXPECT_EQ(t.token_to_id("<|im|>"), 300);
  EXPECT_EQ(t.token_to_id("Ġ"), ' ');
  EXPECT_EQ(t.token_to_id("<|"), 256);
  EXPECT_EQ(t.token_to_id("not a token"), std::nullopt);
}

TEST(Tokenizer, LstripAndRstripSwallowWhitespace) {
  JsonBuilder b;
  nlohmann::json mask = test::added(300, "<mask>");
  mask["lstrip"] = true;
  mask["rstrip"] = true;
  b.added_tokens = {mask};
  Tokenizer t = Tokenizer::from_json_text(b.build(), "test");
  EXPECT_EQ(t.encode("a  <mask>\t b"), (std::vector<int32_t>{'a', 300, 'b'}));
}

TEST(Tokenizer, TablesAreSharedAndComplete) {
  JsonBuilder b;
  b.merges = {{"h", "i"}};
  b.added_tokens = {test::added(260, "<|end|>")};
  Tokenizer t = Tokenizer::from_json_text(b.build(), "test");
  auto bytes = t.bytes_table();
  auto special = t.special_table();
  EXPECT_EQ(bytes.get(), t.bytes_table().get());  // one table, not a copy per caller
  ASSERT_EQ(bytes->size(), 261u);
  ASSERT_EQ(special->size(), 261u);
  EXPECT_EQ((*bytes)[256], "hi");
  EXPECT_EQ((*bytes)[' '], " ");
  EXPECT_EQ((*bytes)[260], "<|end|>");
  EXPECT_TRUE((*special)[260]);
  EXPECT_FALSE((*special)[256]);
  EXPECT_EQ((*bytes)[258], "");  // an id no token uses
  EXPECT_EQ(t.token_bytes(256), "hi");
  EXPECT_EQ(t.token_bytes(-1), "");
  EXPECT_EQ(t.token_bytes(100000), "");
  // Ids past the tokenizer (padded embedding rows) decode to nothing rather than failing.
  EXPECT_EQ(t.decode({'o', 100000, -5, 'k'}), "ok");
}

TEST(Tokenizer, GptTwoByteLevelPreTokenizer) {
  JsonBuilder b;
  b.pre_tokenizer = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  b.merges = {{" ", "1"}, {"1", "2"}, {"'", "s"}};
  Tokenizer t = Tokenizer::from_json_text(b.build(), "test");
  // GPT-2 keeps digit runs together (" 12") where Qwen2 splits every digit.
  EXPECT_EQ(t.encode(" 12"), (std::vector<int32_t>{JsonBuilder::merged_id(0), '2'}));
  EXPECT_EQ(t.encode("it's"), (std::vector<int32_t>{'i', 't', JsonBuilder::merged_id(2)}));

  b.pre_tokenizer["add_prefix_space"] = true;
  Tokenizer prefixed = Tokenizer::from_json_text(b.build(), "test");
  EXPECT_EQ(prefixed.encode("1"), std::vector<int32_t>{JsonBuilder::merged_id(0)});
  EXPECT_EQ(prefixed.decode(prefixed.encode("1")), " 1");
}

TEST(Tokenizer, NfcNormalizerIsAcceptedAsAlreadyApplied) {
  JsonBuilder b;
  b.normalizer = {{"type", "NFC"}};
  Tokenizer t = Tokenizer::from_json_text(b.build(), "test");
  EXPECT_EQ(t.decode(t.encode("café")), "café");
}

}  // namespace
}  // namespace ps
