// Matcher behaviour at the edges: UTF-8 split across tokens, grammars that can end vs must
// continue, EOS and special tokens, the lazy trigger, reset and copies.
#include <gtest/gtest.h>

#include "test_vocab.h"

namespace ps {
namespace {

using test::bit;

// The byte vocabulary plus pieces of U+4E2D (中, E4 B8 AD) and a special token.
struct Fixture {
  std::vector<std::string> extra{"\xE4\xB8", "\xB8\xAD",   "\xE4\xB8\xAD",
                                 "x\xE4",    "<|im_end|>", "ab"};
  std::shared_ptr<const std::vector<std::string>> vocab = test::byte_vocab(extra);
  int32_t id(const std::string& s) const {
    for (size_t i = 0; i < vocab->size(); ++i) {
      if ((*vocab)[i] == s) return static_cast<int32_t>(i);
    }
    return -1;
  }
  int32_t eos() const { return test::eos_of(*vocab); }
  std::shared_ptr<const CompiledGrammar> compile(const std::string& gbnf,
                                                 const std::string& trigger = {}) const {
    GrammarCompiler c(vocab, {eos()}, {}, {id("<|im_end|>")});
    return c.compile({ConstraintSpec::Kind::kGbnf, gbnf, {}, trigger});
  }
  std::vector<uint32_t> mask(GrammarMatcher& m) const {
    std::vector<uint32_t> w(m.mask_words());
    m.fill_next_token_bitmask(w.data());
    return w;
  }
};

TEST(MatcherBehaviour, CodepointSplitAcrossTokens) {
  Fixture f;
  GrammarMatcher m(f.compile(R"(root ::= "中" "x")"));
  auto w = f.mask(m);
  EXPECT_TRUE(bit(w, 0xE4));
  EXPECT_TRUE(bit(w, f.id("\xE4\xB8")));
  EXPECT_TRUE(bit(w, f.id("\xE4\xB8\xAD")));
  EXPECT_FALSE(bit(w, 0xB8));
  EXPECT_FALSE(bit(w, 'x'));
  ASSERT_TRUE(m.accept_token(0xE4));  // one byte of three
  EXPECT_TRUE(m.mid_codepoint());
  w = f.mask(m);
  EXPECT_TRUE(bit(w, 0xB8));
  EXPECT_TRUE(bit(w, f.id("\xB8\xAD")));
  EXPECT_FALSE(bit(w, 0xAD));
  EXPECT_FALSE(bit(w, f.id("\xE4\xB8\xAD")));
  EXPECT_FALSE(m.accept_token(0xAD));  // rejected, state unchanged
  ASSERT_TRUE(m.accept_token(f.id("\xB8\xAD")));
  EXPECT_FALSE(m.mid_codepoint());
  w = f.mask(m);
  EXPECT_TRUE(bit(w, 'x'));
  EXPECT_FALSE(bit(w, f.eos()));
  ASSERT_TRUE(m.accept_token('x'));
  EXPECT_TRUE(m.is_finished());
}

TEST(MatcherBehaviour, PartialCodepointOnlyContinuesIntoTheClass) {
  Fixture f;
  // U+4E00..U+4E2D: after E4 B8 only continuation bytes 80..AD finish a member.
  GrammarMatcher m(f.compile(R"(root ::= [\u4e00-\u4e2d])"));
  ASSERT_TRUE(m.accept_token(f.id("\xE4\xB8")));
  auto w = f.mask(m);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(bit(w, b), b >= 0x80 && b <= 0xAD) << b;
  // A token that ends a member and starts another character: "x\xE4" is not allowed by [..]
  GrammarMatcher m2(f.compile(R"(root ::= "x" [\u4e00-\u4e2d])"));
  ASSERT_TRUE(m2.accept_token(f.id("x\xE4")));
  EXPECT_FALSE(m2.accept_token(0xB9));  // E4 B9 xx is past U+4E2D
  EXPECT_TRUE(m2.accept_token(f.id("\xB8\xAD")));
  EXPECT_TRUE(m2.is_finished());
}

TEST(MatcherBehaviour, CanEndVersusMustContinue) {
  Fixture f;
  GrammarMatcher optional(f.compile(R"(root ::= "a" "b"?)"));
  ASSERT_TRUE(optional.accept_token('a'));
  EXPECT_TRUE(optional.can_terminate());
  EXPECT_FALSE(optional.is_finished());
  auto w = f.mask(optional);
  EXPECT_TRUE(bit(w, f.eos()));
  EXPECT_TRUE(bit(w, 'b'));
  ASSERT_TRUE(optional.accept_token('b'));
  EXPECT_TRUE(optional.is_finished());
  w = f.mask(optional);
  for (int32_t t = 0; t < static_cast<int32_t>(f.vocab->size()); ++t) {
    EXPECT_EQ(bit(w, t), t == f.eos()) << t;
  }

  GrammarMatcher required(f.compile(R"(root ::= "a" "b")"));
  ASSERT_TRUE(required.accept_token('a'));
  EXPECT_FALSE(required.can_terminate());
  w = f.mask(required);
  EXPECT_FALSE(bit(w, f.eos()));
  EXPECT_FALSE(required.accept_token(f.eos()));
  EXPECT_TRUE(required.accept_token('b'));
  EXPECT_TRUE(required.accept_token(f.eos()));
  EXPECT_TRUE(required.is_finished());
  EXPECT_FALSE(required.accept_token('a'));  // nothing after EOS
}

TEST(MatcherBehaviour, SpecialTokensOnlyWhereTheGrammarSpellsThem) {
  Fixture f;
  int32_t special = f.id("<|im_end|>");
  GrammarMatcher anything(f.compile(R"(root ::= .*)"));
  auto w = f.mask(anything);
  EXPECT_TRUE(bit(w, '<'));
  EXPECT_FALSE(bit(w, special));
  EXPECT_FALSE(anything.accept_token(special));
  EXPECT_TRUE(anything.accept_bytes("<|im_end|>"));  // the same text, spelled out, is fine

  GrammarMatcher named(f.compile(R"(root ::= "ok" "<|im_end|>")"));
  ASSERT_TRUE(named.accept_token('o'));
  ASSERT_TRUE(named.accept_token('k'));
  w = f.mask(named);
  EXPECT_TRUE(bit(w, special));
  EXPECT_TRUE(named.accept_token(special));
  EXPECT_TRUE(named.is_finished());
}

TEST(MatcherBehaviour, LazyTriggerFreeUntilTriggeredThenConstrained) {
  Fixture f;
  auto g = f.compile(R"(root ::= "{" [a-z]+ "}")", "<call>");
  GrammarMatcher m(g);
  EXPECT_FALSE(m.triggered());
  auto w = f.mask(m);
  EXPECT_TRUE(bit(w, 'Z'));
  EXPECT_TRUE(bit(w, f.eos()));  // free text may end
  EXPECT_TRUE(m.can_terminate());
  ASSERT_TRUE(m.accept_bytes("Sure. <ca"));
  EXPECT_FALSE(m.triggered());
  // The token that completes the trigger carries on into the grammar: "ll>{" is fine, "ll>x" not.
  EXPECT_FALSE(GrammarMatcher(m).accept_bytes("ll>x"));
  ASSERT_TRUE(m.accept_bytes("ll>{"));
  EXPECT_TRUE(m.triggered());
  EXPECT_FALSE(m.can_terminate());
  w = f.mask(m);
  EXPECT_TRUE(bit(w, 'q'));
  EXPECT_FALSE(bit(w, 'Z'));
  EXPECT_FALSE(bit(w, f.eos()));
  ASSERT_TRUE(m.accept_bytes("ab}"));
  EXPECT_TRUE(m.is_finished());
  m.reset();
  EXPECT_FALSE(m.triggered());
  EXPECT_TRUE(m.accept_bytes("anything at all"));
}

TEST(MatcherBehaviour, CopiesAreIndependentAndResetStartsOver) {
  Fixture f;
  GrammarMatcher a(f.compile(R"(root ::= ("ab" | "c")+)"));
  ASSERT_TRUE(a.accept_token(f.id("ab")));
  GrammarMatcher b = a;
  ASSERT_TRUE(b.accept_token('c'));
  EXPECT_FALSE(a.accept_token('b'));
  EXPECT_TRUE(a.accept_token('c'));
  a.reset();
  EXPECT_FALSE(a.can_terminate());
  EXPECT_TRUE(b.can_terminate());
}

TEST(MatcherBehaviour, OutOfRangeTokensAreRejected) {
  Fixture f;
  GrammarMatcher m(f.compile(R"(root ::= "a")"));
  EXPECT_FALSE(m.accept_token(-1));
  EXPECT_FALSE(m.accept_token(static_cast<int32_t>(f.vocab->size())));
  EXPECT_TRUE(m.accept_token('a'));
}

}  // namespace
}  // namespace ps
