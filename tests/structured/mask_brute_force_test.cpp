// The token mask equals the brute force answer (accept each token's bytes on a copy of the
// matcher) on random grammars at random positions, for the default tokenizer and Qwen3's 151k.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "structured/grammar_compiler.h"
#include "structured/grammar_matcher.h"
#include "test_vocab.h"
#include "vocabularies.h"

namespace ps {
namespace {

// Random GBNF: a few rules over literals cut from the vocabulary's own text (so multi-byte
// tokens matter), classes, groups, repetitions and right recursion.
class RandomGrammar {
 public:
  explicit RandomGrammar(uint32_t seed) : rng_(seed) {}

  std::string make() {
    int rules = 1 + pick(3);
    std::string out = "root ::= ";
    out += alternatives(2, rules);
    out += '\n';
    for (int r = 1; r <= rules; ++r) {
      out += 'r';
      out += std::to_string(r);
      out += " ::= ";
      out += alternatives(2, rules);
      out += '\n';
    }
    return out;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::string alternatives(int depth, int rules) {
    std::string s = sequence(depth, rules);
    int more = pick(3);
    for (int i = 0; i < more; ++i) s += " | " + sequence(depth, rules);
    return s;
  }

  std::string sequence(int depth, int rules) {
    std::string s;
    int n = 1 + pick(3);
    for (int i = 0; i < n; ++i) {
      if (i) s += ' ';
      s += item(depth, rules, i == 0);
    }
    return s;
  }

  std::string item(int depth, int rules, bool first) {
    static const char* kLiterals[] = {"a",          "ab",   "the", " ",       "\\n",
                                      "{",          "\\\"", "12",  "\\u00e9", "\\u4e2d\\u6587",
                                      "<|im_end|>", "x"};
    static const char* kClasses[] = {"[a-z]",     "[0-9]",     "[^\\\"\\\\]",
                                     ".",         "[ \\t\\n]", "[\\u4e00-\\u9fff]",
                                     "[A-Za-z_]", "[^a-z]"};
    std::string base;
    switch (pick(depth > 0 ? 5 : 3)) {
      case 0:
        base = std::string("\"") + kLiterals[pick(12)] + "\"";
        break;
      case 1:
        base = kClasses[pick(8)];
        break;
      case 2:
        // A reference other than in first place keeps the grammar free of left recursion.
        base = first ? std::string("\"") + kLiterals[pick(12)] + "\""
                     : "r" + std::to_string(1 + pick(rules));
        break;
      default:
        base = "(" + alternatives(depth - 1, rules) + ")";
        break;
    }
    switch (pick(7)) {
      case 0:
        return base + "*";
      case 1:
        return base + "+";
      case 2:
        return base + "?";
      case 3:
        return base + "{1,3}";
      default:
        return base;
    }
  }

  std::mt19937 rng_;
};

// Compares the mask with the brute force answer at `steps` positions of one random walk.
void check_walk(GrammarMatcher m, const test::Vocabulary& v, std::mt19937& rng, int steps,
                const std::string& grammar_text) {
  const int32_t n = static_cast<int32_t>(v.bytes->size());
  std::vector<uint32_t> words(m.mask_words());
  for (int step = 0; step < steps; ++step) {
    m.fill_next_token_bitmask(words.data());
    std::vector<int32_t> allowed;
    for (int32_t t = 0; t < n; ++t) {
      GrammarMatcher copy = m;
      bool brute = copy.accept_token(t);
      ASSERT_EQ(test::bit(words, t), brute)
          << "token " << t << " '" << (*v.bytes)[t] << "' at step " << step << "\n"
          << grammar_text;
      if (brute) allowed.push_back(t);
    }
    // Padding bits past the vocabulary stay clear.
    for (size_t b = n; b < words.size() * 32; ++b) ASSERT_FALSE(test::bit(words, b));
    if (allowed.empty() || m.is_finished()) return;
    int32_t t = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
    if (std::find(v.eos.begin(), v.eos.end(), t) != v.eos.end()) return;
    ASSERT_TRUE(m.accept_token(t));
  }
}

void run_random_grammars(const test::Vocabulary& v, int grammars, int steps) {
  CompileLimits limits;
  limits.max_stacks = 32;  // the random grammars are often very ambiguous; keep copies cheap
  GrammarCompiler compiler(v.bytes, v.eos, limits, v.special);
  int compiled = 0;
  for (uint32_t seed = 1; compiled < grammars; ++seed) {
    std::string text = RandomGrammar(seed).make();
    std::shared_ptr<const CompiledGrammar> g;
    try {
      g = compiler.compile({ConstraintSpec::Kind::kGbnf, text, {}, {}});
    } catch (const StructuredError& e) {
      // Only left recursion through a nullable prefix can slip through the generator.
      ASSERT_NE(std::string(e.what()).find("left-recursive"), std::string::npos) << e.what();
      continue;
    }
    ++compiled;
    std::mt19937 rng(seed);
    check_walk(GrammarMatcher(g), v, rng, steps, text);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(MaskBruteForce, RandomGrammarsTinyVocabulary) {
  run_random_grammars(test::tiny_vocabulary(), 60, 12);
}

TEST(MaskBruteForce, RandomGrammarsQwen3Vocabulary) {
  if (test::qwen3_tokenizer_path().empty()) {
    GTEST_SKIP() << "Qwen3 tokenizer.json not installed (tests/js: npm ci)";
  }
  run_random_grammars(test::qwen3_vocabulary(), 4, 4);
}

TEST(MaskBruteForce, LazyTriggerTinyVocabulary) {
  const test::Vocabulary v = test::tiny_vocabulary();
  GrammarCompiler compiler(v.bytes, v.eos, {}, v.special);
  auto g =
      compiler.compile({ConstraintSpec::Kind::kGbnf, "root ::= \" {\" [a-z]+ \"}\"", {}, "call"});
  GrammarMatcher m(g);
  std::mt19937 rng(7);
  ASSERT_TRUE(m.accept_bytes("we ca"));  // half the trigger: tokens completing it are checked
  check_walk(m, v, rng, 6, "lazy");
}

}  // namespace
}  // namespace ps
