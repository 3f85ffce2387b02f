// Accepted and rejected strings for each GBNF construct.
#include <gtest/gtest.h>

#include "structured/gbnf_parser.h"
#include "test_vocab.h"

namespace ps {
namespace {

using test::compile_gbnf;
using test::is_prefix;
using test::matches;

TEST(GbnfConstructs, Literal) {
  auto g = compile_gbnf(R"(root ::= "abc")");
  EXPECT_TRUE(matches(g, "abc"));
  EXPECT_FALSE(matches(g, "ab"));
  EXPECT_TRUE(is_prefix(g, "ab"));
  EXPECT_FALSE(is_prefix(g, "abd"));
  EXPECT_FALSE(is_prefix(g, "abcd"));
}

TEST(GbnfConstructs, LiteralEscapes) {
  auto g = compile_gbnf(R"(root ::= "\n\r\t\"\\\x41\u00e9\U0001F600")");
  EXPECT_TRUE(matches(g, "\n\r\t\"\\A\xC3\xA9\xF0\x9F\x98\x80"));
  EXPECT_FALSE(matches(g, "\n\r\t\"\\A\xC3\xA9"));
}

TEST(GbnfConstructs, NonAsciiLiteralInText) {
  auto g = compile_gbnf("root ::= \"h\xC3\xA9llo\"");
  EXPECT_TRUE(matches(g, "h\xC3\xA9llo"));
  EXPECT_FALSE(matches(g, "hello"));
}

TEST(GbnfConstructs, CharClassRangesAndNegation) {
  auto g = compile_gbnf(R"(root ::= [a-c0-9_] [^"\\])");
  EXPECT_TRUE(matches(g, "a!"));
  EXPECT_TRUE(matches(g, "9x"));
  EXPECT_TRUE(matches(g, "_\xE4\xB8\xAD"));  // a CJK character is "not quote or backslash"
  EXPECT_FALSE(matches(g, "d!"));
  EXPECT_FALSE(matches(g, "a\""));
  EXPECT_FALSE(matches(g, "a\\"));
}

TEST(GbnfConstructs, ClassEscapes) {
  auto g = compile_gbnf(R"(root ::= [\]\[\-\^]+)");
  EXPECT_TRUE(matches(g, "]-[^"));
  EXPECT_FALSE(matches(g, "a"));
}

TEST(GbnfConstructs, AnyCodepoint) {
  auto g = compile_gbnf(R"(root ::= . .)");
  EXPECT_TRUE(matches(g, "ab"));
  EXPECT_TRUE(matches(g, "\xC3\xA9\n"));
  EXPECT_FALSE(matches(g, "a"));
  EXPECT_FALSE(is_prefix(g, "\xC3\x28"));      // ill-formed UTF-8 is never a code point
  EXPECT_FALSE(is_prefix(g, "\xED\xA0\x80"));  // a surrogate
  EXPECT_FALSE(is_prefix(g, "\xC0\x80"));      // overlong
}

TEST(GbnfConstructs, GroupingAndAlternation) {
  auto g = compile_gbnf(R"(root ::= ("ab" | "c") "d" | "e")");
  EXPECT_TRUE(matches(g, "abd"));
  EXPECT_TRUE(matches(g, "cd"));
  EXPECT_TRUE(matches(g, "e"));
  EXPECT_FALSE(matches(g, "ed"));
  EXPECT_FALSE(matches(g, "abcd"));
}

TEST(GbnfConstructs, Repetitions) {
  auto star = compile_gbnf(R"(root ::= "x" "ab"* "y")");
  EXPECT_TRUE(matches(star, "xy"));
  EXPECT_TRUE(matches(star, "xababy"));
  EXPECT_FALSE(matches(star,
                       "xaby"
                       "b"));
  auto plus = compile_gbnf(R"(root ::= [0-9]+)");
  EXPECT_FALSE(matches(plus, ""));
  EXPECT_TRUE(matches(plus, "0123"));
  auto opt = compile_gbnf(R"(root ::= "-"? [0-9])");
  EXPECT_TRUE(matches(opt, "-1"));
  EXPECT_TRUE(matches(opt, "1"));
  EXPECT_FALSE(matches(opt, "--1"));
}

TEST(GbnfConstructs, CountedRepetitions) {
  auto exact = compile_gbnf(R"(root ::= [a-z]{3})");
  EXPECT_TRUE(matches(exact, "abc"));
  EXPECT_FALSE(matches(exact, "ab"));
  EXPECT_FALSE(is_prefix(exact, "abcd"));
  auto at_least = compile_gbnf(R"(root ::= "a"{2,})");
  EXPECT_FALSE(matches(at_least, "a"));
  EXPECT_TRUE(matches(at_least, "aa"));
  EXPECT_TRUE(matches(at_least, "aaaaaaa"));
  auto range = compile_gbnf(R"(root ::= ("ab"){1,3})");
  EXPECT_FALSE(matches(range, ""));
  EXPECT_TRUE(matches(range, "ab"));
  EXPECT_TRUE(matches(range, "ababab"));
  EXPECT_FALSE(is_prefix(range, "abababa"));
  auto zero = compile_gbnf(R"(root ::= "a"{0} "b")");
  EXPECT_TRUE(matches(zero, "b"));
  EXPECT_FALSE(matches(zero, "ab"));
}

TEST(GbnfConstructs, RecursionAndForwardReferences) {
  auto g = compile_gbnf(R"g(
    # balanced parentheses, defined after use
    root ::= parens
    parens ::= "(" parens ")" parens | ""
  )g");
  EXPECT_TRUE(matches(g, ""));
  EXPECT_TRUE(matches(g, "(()())()"));
  EXPECT_FALSE(matches(g, "(()"));
  EXPECT_TRUE(is_prefix(g, "(()"));
  EXPECT_FALSE(is_prefix(g, "())"));
}

TEST(GbnfConstructs, RulesSpanLinesAndComments) {
  auto g = compile_gbnf(R"(root ::= "a"   # first
      | "b" # second
    other ::= "c")");
  EXPECT_TRUE(matches(g, "a"));
  EXPECT_TRUE(matches(g, "b"));
  EXPECT_FALSE(matches(g, "c"));
}

TEST(GbnfConstructs, EmptyAlternative) {
  auto g = compile_gbnf(R"(root ::= "a" | )");
  EXPECT_TRUE(matches(g, ""));
  EXPECT_TRUE(matches(g, "a"));
}

TEST(GbnfConstructs, AmbiguousGrammarDoesNotBlowUp) {
  // Each "a" can come from either alternative: without deduplicated stacks the set doubles
  // per character.
  auto g = compile_gbnf(R"(root ::= ("a" | "a" | [a-b])*)");
  EXPECT_TRUE(matches(g, std::string(2000, 'a')));
}

struct BadGrammar {
  const char* text;
  const char* message_part;
};

class GbnfErrors : public ::testing::TestWithParam<BadGrammar> {};

TEST_P(GbnfErrors, NameThePlace) {
  try {
    parse_gbnf(GetParam().text);
    FAIL() << "accepted: " << GetParam().text;
  } catch (const StructuredError& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().message_part), std::string::npos) << e.what();
    EXPECT_EQ(e.param, "grammar");
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, GbnfErrors,
    ::testing::Values(BadGrammar{"root ::= \"abc", "line 1:10: string literal is never closed"},
                      BadGrammar{"root ::= [abc", "line 1:10: character class is never closed"},
                      BadGrammar{"root ::= x", "line 1:10: rule 'x' is used but never defined"},
                      BadGrammar{"a ::= \"x\"", "no rule named 'root'"},
                      BadGrammar{"root ::= \"a\"\nroot ::= \"b\"",
                                 "line 2:1: rule 'root' is "
                                 "defined twice"},
                      BadGrammar{"root ::= ( \"a\"", "line 1:10: '(' is never closed"},
                      BadGrammar{"root ::= \"a\" )", "line 1:14: unmatched ')'"},
                      BadGrammar{"root ::= \"\\q\"", "line 1:11: unknown escape '\\q'"},
                      BadGrammar{"root ::= [z-a]", "line 1:10: character class range is reversed"},
                      BadGrammar{"root ::= \"a\"{3,1}", "n < m"},
                      BadGrammar{"root ::= \"a\"{2", "not closed with '}'"},
                      BadGrammar{"root = \"a\"", "line 1:6: expected '::=' after rule name"},
                      BadGrammar{"root ::= \"\\uD800\"", "not a Unicode scalar value"},
                      BadGrammar{"root ::= @", "line 1:10: unexpected character '@'"},
                      BadGrammar{"root ::= expr\nexpr ::= expr \"+\" \"1\" | \"1\"",
                                 "rule 'expr' (line 2:1) is left-recursive: expr -> expr"},
                      BadGrammar{"root ::= a\na ::= b \"x\"\nb ::= \"\" | a", "is left-recursive"},
                      BadGrammar{"root ::= (\"x\"?)*", "is left-recursive"},
                      BadGrammar{"root ::= \"a\"{100000000}", "over the limit"}));

TEST(GbnfLimits, ElementsLimitNamesTheLimit) {
  GbnfLimits limits;
  limits.max_elements = 1000;
  try {
    parse_gbnf(R"(root ::= [a-z]{0,800})", limits);
    FAIL();
  } catch (const StructuredError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 1000 elements"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ps
