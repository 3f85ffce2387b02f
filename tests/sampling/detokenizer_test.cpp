#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sampling/incremental_detokenizer.h"
#include "sampling/utf8.h"
#include "token_table.h"

namespace ps {
namespace {

using namespace testing_tables;
using Table = TokenTable;

struct Decoded {
  std::vector<std::string> pieces;  // one per append, then the flush
  std::string all() const {
    std::string s;
    for (const auto& p : pieces) s += p;
    return s;
  }
};

Decoded decode(const Table& t, const std::vector<int32_t>& ids, bool skip_special = true) {
  IncrementalDetokenizer d(t.bytes, t.special, skip_special);
  Decoded out;
  for (int32_t id : ids) out.pieces.push_back(d.append(id));
  out.pieces.push_back(d.flush());
  for (const auto& p : out.pieces) {
    EXPECT_TRUE(is_valid_utf8(p)) << "a streamed piece is not valid UTF-8";
  }
  return out;
}

TEST(Utf8Test, ClassifiesUnits) {
  EXPECT_EQ(next_utf8_unit("a", 0).status, Utf8Status::kValid);
  EXPECT_EQ(next_utf8_unit(kZhong, 0).length, 3u);
  EXPECT_EQ(next_utf8_unit(kGrin, 0).length, 4u);
  EXPECT_EQ(next_utf8_unit("\xE4\xB8", 0).status, Utf8Status::kTruncated);
  EXPECT_EQ(next_utf8_unit("\x80", 0).status, Utf8Status::kInvalid);
  EXPECT_EQ(next_utf8_unit("\xC0\xAF", 0).status, Utf8Status::kInvalid);          // overlong
  EXPECT_EQ(next_utf8_unit("\xED\xA0\x80", 0).status, Utf8Status::kInvalid);      // surrogate
  EXPECT_EQ(next_utf8_unit("\xF4\x90\x80\x80", 0).status, Utf8Status::kInvalid);  // > 10FFFF
  Utf8Unit u = next_utf8_unit("\xE4\xB8x", 0);
  EXPECT_EQ(u.status, Utf8Status::kInvalid);
  EXPECT_EQ(u.length, 2u);  // the maximal subpart: one U+FFFD, then 'x'
  EXPECT_TRUE(is_valid_utf8("a" + kZhong + kGrin));
  EXPECT_FALSE(is_valid_utf8("a\xE4"));
}

TEST(DetokenizerTest, AsciiPassesStraightThrough) {
  Table t;
  int32_t a = t.add("Hello"), b = t.add(" world");
  auto d = decode(t, {a, b});
  EXPECT_EQ(d.pieces, (std::vector<std::string>{"Hello", " world", ""}));
}

TEST(DetokenizerTest, CjkSplitOverTwoAndThreeTokens) {
  Table t;
  int32_t b0 = t.add(kZhong.substr(0, 1)), b12 = t.add(kZhong.substr(1)),
          b01 = t.add(kZhong.substr(0, 2)), b2 = t.add(kZhong.substr(2)),
          b1 = t.add(kZhong.substr(1, 1)), x = t.add("x");
  auto two = decode(t, {x, b0, b12, x});
  EXPECT_EQ(two.pieces, (std::vector<std::string>{"x", "", kZhong, "x", ""}));
  auto two_b = decode(t, {b01, b2});
  EXPECT_EQ(two_b.pieces, (std::vector<std::string>{"", kZhong, ""}));
  auto three = decode(t, {b0, b1, b2, b0, b1, b2});
  EXPECT_EQ(three.pieces, (std::vector<std::string>{"", "", kZhong, "", "", kZhong, ""}));
}

TEST(DetokenizerTest, EmojiSplitOverTwoThreeAndFourTokens) {
  Table t;
  std::vector<int32_t> single;
  for (int i = 0; i < 4; ++i) single.push_back(t.add(kGrin.substr(i, 1)));
  int32_t head2 = t.add(kGrin.substr(0, 2)), tail2 = t.add(kGrin.substr(2));
  int32_t head1 = single[0], mid2 = t.add(kGrin.substr(1, 2)), last = single[3];
  // With a character completed in the same token as the next one starts.
  int32_t tail_and_next = t.add(kGrin.substr(3) + "ok" + kGrin.substr(0, 3));

  EXPECT_EQ(decode(t, single).pieces, (std::vector<std::string>{"", "", "", kGrin, ""}));
  EXPECT_EQ(decode(t, {head2, tail2}).pieces, (std::vector<std::string>{"", kGrin, ""}));
  EXPECT_EQ(decode(t, {head1, mid2, last}).pieces, (std::vector<std::string>{"", "", kGrin, ""}));
  EXPECT_EQ(decode(t, {head1, mid2, tail_and_next, last}).all(), kGrin + "ok" + kGrin);
}

TEST(DetokenizerTest, LoneContinuationByteBecomesOneReplacementNeverThrows) {
  Table t;
  int32_t cont = t.add("\x80"), a = t.add("a"), lead3 = t.add("\xE4"), lead4 = t.add("\xF0\x9F");
  EXPECT_EQ(decode(t, {a, cont, a}).all(), "a" + kFFFD + "a");
  EXPECT_EQ(decode(t, {cont}).all(), kFFFD);
  // An unfinished character is held back, then replaced at flush: one U+FFFD per sequence.
  auto held = decode(t, {a, lead3});
  EXPECT_EQ(held.pieces, (std::vector<std::string>{"a", "", kFFFD}));
  EXPECT_EQ(decode(t, {lead4}).all(), kFFFD);
  // A character interrupted by something that cannot continue it.
  EXPECT_EQ(decode(t, {lead3, a, lead4, lead3}).all(), kFFFD + "a" + kFFFD + kFFFD);
}

TEST(DetokenizerTest, SpecialTokensSkippedOrKept) {
  Table t;
  int32_t a = t.add("a"), eot = t.add("<|end|>", true), head = t.add(kZhong.substr(0, 1)),
          tail = t.add(kZhong.substr(1));
  EXPECT_EQ(decode(t, {a, eot, a}, true).all(), "aa");
  EXPECT_EQ(decode(t, {a, eot, a}, false).all(), "a<|end|>a");
  // A skipped special token adds no bytes, so a split character still joins across it.
  EXPECT_EQ(decode(t, {head, eot, tail}, true).all(), kZhong);
}

TEST(DetokenizerTest, UnknownIdsAndMissingTablesDecodeToNothing) {
  Table t;
  int32_t a = t.add("a");
  EXPECT_EQ(decode(t, {a, -1, 1000, a}).all(), "aa");
  IncrementalDetokenizer none(nullptr, nullptr, true);
  EXPECT_EQ(none.append(3), "");
  EXPECT_EQ(none.flush(), "");
}

// Every way of cutting the same bytes into tokens decodes to the same text.
TEST(DetokenizerTest, TextDoesNotDependOnTokenBoundaries) {
  const std::string text = "a" + kZhong + "\x80" + kGrin + "b\xE4\xB8" + "c" + kGrin.substr(0, 3);
  const std::string expect = "a" + kZhong + kFFFD + kGrin + "b" + kFFFD + "c" + kFFFD;
  for (size_t step = 1; step <= 5; ++step) {
    Table t;
    std::vector<int32_t> ids;
    for (size_t i = 0; i < text.size(); i += step) ids.push_back(t.add(text.substr(i, step)));
    EXPECT_EQ(decode(t, ids).all(), expect) << "token size " << step;
  }
}

}  // namespace
}  // namespace ps
