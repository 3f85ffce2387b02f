#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "sampling/stop_checker.h"
#include "sampling/utf8.h"
#include "token_table.h"

namespace ps {
namespace {

using namespace testing_tables;

constexpr int32_t kNoLimit = 1 << 30;

// Feeds tokens until the checker says stop; keeps every streamed piece.
struct Streamed {
  std::vector<std::string> pieces;
  StopReason reason = StopReason::kNone;
  std::string matched;
  int32_t fed = 0;

  std::string text() const {
    std::string s;
    for (const auto& p : pieces) s += p;
    return s;
  }
};

Streamed feed(StopChecker& c, const std::vector<int32_t>& ids) {
  Streamed r;
  for (int32_t id : ids) {
    StopResult res = c.append(id);
    ++r.fed;
    EXPECT_TRUE(is_valid_utf8(res.text)) << "streamed a partial UTF-8 character";
    r.pieces.push_back(res.text);
    if (res.reason != StopReason::kNone) {
      r.reason = res.reason;
      r.matched = res.matched_stop;
      break;
    }
  }
  return r;
}

struct Fixture {
  TokenTable t;
  SamplingParams p;
  std::vector<int32_t> eos;
  int32_t prompt_len = 0;
  int32_t max_model_len = kNoLimit;

  Fixture() { p.max_tokens = 1000; }
  StopChecker make() const {
    return StopChecker(p, eos, prompt_len, max_model_len, t.bytes, t.special);
  }
  Streamed run(const std::vector<int32_t>& ids) const {
    StopChecker c = make();
    return feed(c, ids);
  }
};

TEST(StopCheckerTest, StopStringSpanningTwoTokens) {
  Fixture f;
  std::vector<int32_t> ids = {f.t.add("The"), f.t.add(" an"), f.t.add("swer"), f.t.add(" is")};
  f.p.stop = {"answer"};
  Streamed r = f.run(ids);
  EXPECT_EQ(r.reason, StopReason::kStopString);
  EXPECT_EQ(r.matched, "answer");
  EXPECT_EQ(r.fed, 3);
  // "an" was held back the moment it could start "answer"; nothing of it was ever emitted.
  EXPECT_EQ(r.pieces, (std::vector<std::string>{"The", " ", ""}));
}

TEST(StopCheckerTest, StopStringPrefixThatNeverCompletesIsEmittedLater) {
  Fixture f;
  std::vector<int32_t> ids = {f.t.add("an"), f.t.add("swer"), f.t.add("?"), f.t.add(" an")};
  f.p.stop = {"answer!"};
  f.p.max_tokens = 4;
  Streamed r = f.run(ids);
  EXPECT_EQ(r.reason, StopReason::kMaxTokens);
  // Held while it could still become "answer!", released once "?" ruled that out, and the
  // trailing " an" (still a possible start) is flushed when the request ends.
  EXPECT_EQ(r.pieces, (std::vector<std::string>{"", "", "answer?", " an"}));
  EXPECT_EQ(r.text(), "answer? an");
}

TEST(StopCheckerTest, StopInsideOneTokenCutsTheRest) {
  Fixture f;
  f.p.stop = {"STOP"};
  Streamed r = f.run({f.t.add("foo STOP bar")});
  EXPECT_EQ(r.reason, StopReason::kStopString);
  EXPECT_EQ(r.text(), "foo ");
}

TEST(StopCheckerTest, FirstStopToCompleteWins) {
  Fixture f;
  f.p.stop = {"abcd", "bc"};
  Streamed r = f.run({f.t.add("xabcd")});
  EXPECT_EQ(r.matched, "bc");  // ends first, though "abcd" starts first
  EXPECT_EQ(r.text(), "xa");
  // Same answer whatever the tokenization.
  Fixture g;
  g.p.stop = f.p.stop;
  Streamed r2 = g.run({g.t.add("x"), g.t.add("a"), g.t.add("b"), g.t.add("cd")});
  EXPECT_EQ(r2.matched, "bc");
  EXPECT_EQ(r2.text(), "xa");
}

TEST(StopCheckerTest, OverlappingPrefixesAreTracked) {
  Fixture f;
  f.p.stop = {"aab"};
  int32_t a = f.t.add("a"), b = f.t.add("b");
  Streamed r = f.run({a, a, a, b});
  EXPECT_EQ(r.reason, StopReason::kStopString);
  EXPECT_EQ(r.pieces, (std::vector<std::string>{"", "", "a", ""}));
}

TEST(StopCheckerTest, MultiByteStopStringSplitAcrossTokens) {
  Fixture f;
  f.p.stop = {kZhong + kWen};
  std::string both = kZhong + kWen;
  std::vector<int32_t> ids = {f.t.add(std::string("x").append(both, 0, 2)),
                              f.t.add(both.substr(2, 3)), f.t.add(both.substr(5)), f.t.add("y")};
  Streamed r = f.run(ids);
  EXPECT_EQ(r.reason, StopReason::kStopString);
  EXPECT_EQ(r.text(), "x");
}

TEST(StopCheckerTest, SharedLeadingBytesAreNotAStop) {
  Fixture f;
  f.p.stop = {kZhong};                    // E4 B8 AD
  const std::string ya = "\xE4\xB8\xAB";  // 丫: same first two bytes
  f.p.max_tokens = 3;
  Streamed r = f.run({f.t.add(ya.substr(0, 1)), f.t.add(ya.substr(1)), f.t.add("!")});
  EXPECT_EQ(r.reason, StopReason::kMaxTokens);
  EXPECT_EQ(r.text(), ya + "!");
  EXPECT_EQ(r.pieces[1], ya);  // emitted as soon as it was whole and not a stop
}

TEST(StopCheckerTest, EosEndsWithoutItsText) {
  for (bool skip : {true, false}) {
    Fixture f;
    f.p.skip_special_tokens = skip;
    f.p.stop = {"hello!"};
    int32_t eos = f.t.add("<|eos|>", true);
    f.eos = {eos};
    Streamed r = f.run({f.t.add("hello"), eos, f.t.add("more")});
    EXPECT_EQ(r.reason, StopReason::kEos);
    EXPECT_EQ(r.text(), "hello");  // the held "hello" is flushed, "<|eos|>" never appears
    EXPECT_EQ(r.fed, 2);
  }
}

TEST(StopCheckerTest, IgnoreEosKeepsGoing) {
  Fixture f;
  int32_t eos = f.t.add("<|eos|>", true);
  int32_t a = f.t.add("a");
  f.eos = {eos};
  f.p.ignore_eos = true;
  f.p.max_tokens = 4;
  f.p.min_tokens = 2;
  StopChecker c = f.make();
  EXPECT_TRUE(c.suppressed_ids().empty());  // EOS is not banned: it is not a stop at all
  Streamed r = feed(c, {a, eos, a, eos, a});
  EXPECT_EQ(r.reason, StopReason::kMaxTokens);
  EXPECT_EQ(r.fed, 4);
  EXPECT_EQ(r.text(), "aa");  // special token skipped from text
}

TEST(StopCheckerTest, StopTokenIds) {
  Fixture f;
  int32_t a = f.t.add("a"), stop = f.t.add("<|im_end|>", true);
  f.p.stop_token_ids = {stop};
  Streamed r = f.run({a, a, stop, a});
  EXPECT_EQ(r.reason, StopReason::kStopToken);
  EXPECT_EQ(r.text(), "aa");
}

TEST(StopCheckerTest, MinTokensSuppressesEosAndStops) {
  Fixture f;
  int32_t eos = f.t.add("<eos>", true), stop_id = f.t.add("<stop>", true), a = f.t.add("a"),
          s = f.t.add("S");
  f.eos = {eos};
  f.p.stop_token_ids = {stop_id, eos};
  f.p.stop = {"S"};
  f.p.min_tokens = 3;
  StopChecker c = f.make();
  EXPECT_EQ(c.suppressed_ids(), (std::vector<int32_t>{eos, stop_id}));  // no duplicates
  // Before min_tokens, nothing ends the request: an EOS that slipped through, a stop id, a stop
  // string (emitted as ordinary text).
  EXPECT_EQ(c.append(eos).reason, StopReason::kNone);
  EXPECT_EQ(c.suppressed_ids().size(), 2u);
  StopResult r2 = c.append(s);
  EXPECT_EQ(r2.reason, StopReason::kNone);
  EXPECT_EQ(r2.text, "S");
  EXPECT_EQ(c.suppressed_ids().size(), 2u);
  EXPECT_EQ(c.append(a).reason, StopReason::kNone);
  EXPECT_EQ(c.num_output_tokens(), 3);
  EXPECT_TRUE(c.suppressed_ids().empty());
  StopResult r4 = c.append(s);
  EXPECT_EQ(r4.reason, StopReason::kStopString);
  EXPECT_EQ(r4.text, "");
}

TEST(StopCheckerTest, MinTokensThenEos) {
  Fixture f;
  int32_t eos = f.t.add("<eos>", true), a = f.t.add("a");
  f.eos = {eos};
  f.p.min_tokens = 2;
  Streamed r = f.run({a, a, eos});
  EXPECT_EQ(r.reason, StopReason::kEos);
  EXPECT_EQ(r.fed, 3);
}

TEST(StopCheckerTest, MaxTokensFlushesAnUnfinishedCharacter) {
  Fixture f;
  f.p.max_tokens = 2;
  Streamed r = f.run({f.t.add("a"), f.t.add(kGrin.substr(0, 2)), f.t.add(kGrin.substr(2))});
  EXPECT_EQ(r.reason, StopReason::kMaxTokens);
  EXPECT_EQ(r.text(), "a" + kFFFD);
}

TEST(StopCheckerTest, ContextLength) {
  Fixture f;
  int32_t a = f.t.add("a");
  f.prompt_len = 10;
  f.max_model_len = 13;
  Streamed r = f.run({a, a, a, a});
  EXPECT_EQ(r.reason, StopReason::kContextLength);
  EXPECT_EQ(r.fed, 3);
  // max_tokens on the same token reads as max_tokens; EOS on it as EOS.
  f.p.max_tokens = 3;
  EXPECT_EQ(f.run({a, a, a}).reason, StopReason::kMaxTokens);
  int32_t eos = f.t.add("<eos>", true);
  f.eos = {eos};
  EXPECT_EQ(f.run({a, a, eos}).reason, StopReason::kEos);
}

TEST(StopCheckerTest, AfterTheEndNothingMoreIsEmitted) {
  Fixture f;
  int32_t a = f.t.add("a");
  f.p.max_tokens = 1;
  StopChecker c = f.make();
  EXPECT_EQ(c.append(a).reason, StopReason::kMaxTokens);
  StopResult again = c.append(a);
  EXPECT_EQ(again.reason, StopReason::kMaxTokens);
  EXPECT_EQ(again.text, "");
  EXPECT_EQ(c.num_output_tokens(), 1);
}

// One-shot reference: decode all bytes at once (U+FFFD per invalid sequence), then cut at
// the stop string that ends first (longest on a tie).
std::string decode_all(const TokenTable& t, const std::vector<int32_t>& ids) {
  std::string bytes;
  for (int32_t id : ids) bytes += (*t.bytes)[id];
  std::string out;
  for (size_t i = 0; i < bytes.size();) {
    Utf8Unit u = next_utf8_unit(bytes, i);
    out += u.status == Utf8Status::kValid ? bytes.substr(i, u.length) : kFFFD;
    i += u.length;
  }
  return out;
}

std::string cut_at_first_stop(const std::string& text, const std::vector<std::string>& stops,
                              bool* stopped) {
  for (size_t end = 1; end <= text.size(); ++end) {
    const std::string* best = nullptr;
    for (const auto& s : stops) {
      if (s.size() <= end && text.compare(end - s.size(), s.size(), s) == 0 &&
          (best == nullptr || s.size() > best->size())) {
        best = &s;
      }
    }
    if (best != nullptr) {
      *stopped = true;
      return text.substr(0, end - best->size());
    }
  }
  *stopped = false;
  return text;
}

TEST(StopCheckerTest, StreamingEqualsOneShotOnRandomText) {
  // Fragments chosen to collide: stop-string pieces, split multi-byte characters, stray bytes.
  const std::vector<std::string> fragments = {"a",
                                              "b",
                                              "ab",
                                              "ba",
                                              "aab",
                                              " ",
                                              "\n",
                                              "\n\n",
                                              "Q:",
                                              "Q",
                                              ":",
                                              kZhong,
                                              kZhong.substr(0, 1),
                                              kZhong.substr(1),
                                              kWen.substr(0, 2),
                                              kWen.substr(2),
                                              kGrin.substr(0, 1),
                                              kGrin.substr(1, 2),
                                              kGrin.substr(3),
                                              "\x80",
                                              "\xFF"};
  const std::vector<std::vector<std::string>> stop_sets = {
      {}, {"aab"}, {"\n\n", "Q:"}, {kZhong + kWen, "ba"}, {"b" + kGrin}, {"abab", "bab"}};
  std::mt19937 gen(4242);
  int stopped_runs = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    TokenTable t;
    for (const auto& f : fragments) t.add(f);
    std::vector<int32_t> ids(1 + gen() % 20);
    for (auto& id : ids) id = static_cast<int32_t>(gen() % fragments.size());

    SamplingParams p;
    p.stop = stop_sets[trial % stop_sets.size()];
    p.max_tokens = static_cast<int32_t>(ids.size());
    StopChecker c(p, {}, 0, kNoLimit, t.bytes, t.special);
    Streamed r = feed(c, ids);

    bool stopped = false;
    std::string expect = cut_at_first_stop(decode_all(t, ids), p.stop, &stopped);
    ASSERT_EQ(r.text(), expect) << "trial " << trial;
    ASSERT_EQ(r.reason, stopped ? StopReason::kStopString : StopReason::kMaxTokens)
        << "trial " << trial;
    stopped_runs += stopped;
  }
  EXPECT_GT(stopped_runs, 300);  // the generator really exercises stop strings
}

}  // namespace
}  // namespace ps
