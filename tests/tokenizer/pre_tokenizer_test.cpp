// Where the pre-tokenizer cuts text: the Qwen2 pattern, Split behaviors, and bad UTF-8.
#include "tokenizer/pre_tokenizer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ps {
namespace {

const char* kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

nlohmann::json split_step(nlohmann::json pattern, const std::string& behavior,
                          bool invert = false) {
  return {{"type", "Split"}, {"pattern", pattern}, {"behavior", behavior}, {"invert", invert}};
}

PreTokenizer sequence(nlohmann::json split) {
  nlohmann::json j = {
      {"type", "Sequence"},
      {"pretokenizers",
       {split, {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  return PreTokenizer::from_json(j, "test");
}

std::vector<std::string> pieces_of(const PreTokenizer& pre, std::string_view text) {
  std::vector<Regex::Span> spans;
  pre.split(text, spans);
  std::vector<std::string> out;
  for (const auto& s : spans) out.emplace_back(text.substr(s.begin, s.end - s.begin));
  return out;
}

using Pieces = std::vector<std::string>;

TEST(PreTokenizer, Qwen2Pattern) {
  PreTokenizer pre = sequence(split_step({{"Regex", kQwen2}}, "Isolated"));
  EXPECT_EQ(pieces_of(pre, "Hello world's 123 !!\n\n  x"),
            (Pieces{"Hello", " world", "'s", " ", "1", "2", "3", " !!\n\n", " ", " x"}));
  EXPECT_EQ(pieces_of(pre, "你好，世界！I'M here"),
            (Pieces{"你好", "，世界", "！I", "'M", " here"}));
  EXPECT_EQ(pieces_of(pre, "a\r\n\r\nb   "), (Pieces{"a", "\r\n\r\n", "b", "   "}));
  EXPECT_EQ(pieces_of(pre, ""), Pieces{});
}

TEST(PreTokenizer, WhiteSpaceMeansUnicodeWhiteSpaceNotPcreSpace) {
  PreTokenizer pre = sequence(split_step({{"Regex", kQwen2}}, "Isolated"));
  // U+180E stopped being White_Space in Unicode 6.3; PCRE2's \s still takes it, Oniguruma and
  // the reference library do not, so " \u180E" is a punctuation-like run before "y" (PCRE2's
  // own \s would give " " and "\u180Ey").
  EXPECT_EQ(pieces_of(pre, "x \xE1\xA0\x8Ey"), (Pieces{"x", " \xE1\xA0\x8E", "y"}));
  EXPECT_EQ(oniguruma_to_pcre2(R"(a\s+[^\s\S]\\s\Q\s\E)"),
            R"(a\p{White_Space}+[^\p{White_Space}\P{White_Space}]\\s\Q\s\E)");
}

TEST(PreTokenizer, SplitBehaviors) {
  nlohmann::json dash = {{"String", "-"}};
  const std::string text = "the-final--countdown";
  EXPECT_EQ(pieces_of(sequence(split_step(dash, "Removed")), text),
            (Pieces{"the", "final", "countdown"}));
  EXPECT_EQ(pieces_of(sequence(split_step(dash, "Isolated")), text),
            (Pieces{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(pieces_of(sequence(split_step(dash, "MergedWithPrevious")), text),
            (Pieces{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(pieces_of(sequence(split_step(dash, "MergedWithNext")), text),
            (Pieces{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(pieces_of(sequence(split_step(dash, "Contiguous")), text),
            (Pieces{"the", "-", "final", "--", "countdown"}));
  // invert: the pattern names the pieces to keep, the rest are the delimiters.
  EXPECT_EQ(pieces_of(sequence(split_step({{"Regex", "[a-z]+"}}, "Removed", true)), text),
            (Pieces{"the", "final", "countdown"}));
}

TEST(PreTokenizer, RegexMetacharactersInStringPatternsAreLiteral) {
  PreTokenizer pre = sequence(split_step({{"String", "a.b"}}, "Isolated"));
  EXPECT_EQ(pieces_of(pre, "xa.bxaxb"), (Pieces{"x", "a.b", "xaxb"}));
}

TEST(PreTokenizer, InvalidUtf8BytesArePiecesOfTheirOwn) {
  PreTokenizer pre = sequence(split_step({{"Regex", kQwen2}}, "Isolated"));
  std::string text =
      "ab\xff"
      "cd \xc3 e\xed\xa0\x80"
      "f\xc0\xaf";
  EXPECT_EQ(pieces_of(pre, text), (Pieces{"ab", "\xff", "cd", " ", "\xc3", " e", "\xed", "\xa0",
                                          "\x80", "f", "\xc0", "\xaf"}));
}

TEST(PreTokenizer, LongRunsDoNotFail) {
  PreTokenizer pre = sequence(split_step({{"Regex", kQwen2}}, "Isolated"));
  std::string spaces(200000, ' ');
  spaces += "x";
  auto pieces = pieces_of(pre, spaces);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[1], " x");
  std::string letters(200000, 'a');
  EXPECT_EQ(pieces_of(pre, letters).size(), 1u);
}

}  // namespace
}  // namespace ps
