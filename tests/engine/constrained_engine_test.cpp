// Constrained decoding through the engine: every output a random model samples at temperature 1
// matches its grammar, a finished grammar ends the request with "stop", preemption and
// recompute keep each sequence's matcher, and unconstrained rows in the same batch are unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <thread>

#include "engine/engine.h"
#include "structured/grammar_compiler.h"
#include "structured/grammar_matcher.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/test_model.h"

namespace ps {
namespace {

using testing_util::expect_settled;
using testing_util::random_prompt;
using testing_util::small_config;
using testing_util::small_tokenizer;
using testing_util::submit_ok;
using namespace std::chrono_literals;

struct Output {
  std::vector<int32_t> tokens;
  std::string text;
  std::optional<FinishReason> finish;
  std::vector<TokenLogprob> logprobs;
  int finish_events = 0;
};

Output collect(RequestStream& stream) {
  Output c;
  RequestOutput ev;
  auto deadline = std::chrono::steady_clock::now() + 120s;
  while (!stream.finished() && std::chrono::steady_clock::now() < deadline) {
    if (!stream.next(&ev, 100ms)) continue;
    c.tokens.insert(c.tokens.end(), ev.token_ids.begin(), ev.token_ids.end());
    c.text += ev.text;
    c.logprobs.insert(c.logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
    if (ev.finish) {
      ++c.finish_events;
      c.finish = ev.finish;
    }
  }
  return c;
}

class ConstrainedEngineTest : public ::testing::Test {
 protected:
  EngineConfig config(int32_t blocks = 256, int32_t block_size = 16) {
    EngineConfig c;
    c.num_blocks = blocks;
    c.block_size = block_size;
    c.max_num_seqs = 32;
    c.check_integrity_every_step = true;
    c.runner.linear_mode = LinearMode::packed;  // batch-invariant rows (see engine_test.cpp)
    return c;
  }
  std::shared_ptr<const CompiledGrammar> compile(const std::string& gbnf) {
    std::vector<int32_t> special;
    for (int32_t id = 0; id < tok->vocab_size(); ++id) {
      if (tok->is_special(id)) special.push_back(id);
    }
    GrammarCompiler c(tok->bytes_table(), {2}, {}, special);
    return c.compile({ConstraintSpec::Kind::kGbnf, gbnf, {}, {}});
  }
  // The tokens' bytes, matched from the start (ids the detokenizer may hide included).
  static bool tokens_match(const std::shared_ptr<const CompiledGrammar>& g,
                           const std::vector<int32_t>& tokens, bool whole) {
    GrammarMatcher m(g);
    for (int32_t t : tokens) {
      if (!m.accept_token(t)) return false;
    }
    return !whole || m.can_terminate();
  }

  std::shared_ptr<const Tokenizer> tok = small_tokenizer();
};

const char* kGrammars[] = {
    // Must end: a small JSON object, then nothing but EOS.
    R"(root ::= "{\"n\": " [0-9]{1,3} ", \"w\": \"" [a-z]{1,6} "\"}")",
    // Can end anywhere after one word, or go on.
    R"(root ::= [a-z]+ (" " [a-z]+)*)",
    // Right recursion and alternation.
    R"(root ::= list
       list ::= "[" (item ("," item)*)? "]"
       item ::= "x" | "yy" | list)",
};

TEST_F(ConstrainedEngineTest, SampledOutputAtTemperatureOneAlwaysMatches) {
  Engine engine(random_model(small_config(), 21), tok, config());
  std::mt19937 rng(3);
  int stopped_by_grammar = 0;
  for (const char* text : kGrammars) {
    auto g = compile(text);
    std::vector<std::unique_ptr<RequestStream>> streams;
    for (int i = 0; i < 8; ++i) {
      Request r{random_prompt(rng, 5 + i, 512), {}};
      r.params.temperature = 1.0f;
      r.params.seed = 10 + i;
      r.params.max_tokens = 40;
      r.params.grammar = g;
      streams.push_back(submit_ok(engine, r));
    }
    for (auto& s : streams) {
      Output o = collect(*s);
      ASSERT_EQ(o.finish_events, 1);
      ASSERT_TRUE(o.finish);
      if (*o.finish == FinishReason::kStop) {
        // Ended by EOS (allowed only where the grammar can end) or by the grammar closing.
        std::vector<int32_t> body = o.tokens;
        if (!body.empty() && body.back() == 2) body.pop_back();
        EXPECT_TRUE(tokens_match(g, body, true)) << text << "\n" << o.text;
        ++stopped_by_grammar;
      } else {
        ASSERT_EQ(*o.finish, FinishReason::kLength) << o.text;
        EXPECT_TRUE(tokens_match(g, o.tokens, false)) << text << "\n" << o.text;
      }
    }
  }
  // The first grammar always closes within 40 tokens: at least those 8 stopped.
  EXPECT_GE(stopped_by_grammar, 8);
}

TEST_F(ConstrainedEngineTest, ClosedGrammarStopsAtOnceWithItsText) {
  Engine engine(random_model(small_config(), 21), tok, config());
  auto g = compile(R"(root ::= "yes" | "no")");
  Request r{{5, 6, 7}, {}};
  r.params.temperature = 1.0f;
  r.params.seed = 1;
  r.params.max_tokens = 30;
  r.params.min_tokens = 10;  // a closed grammar wins: nothing but EOS could follow
  r.params.grammar = g;
  Output o = collect(*submit_ok(engine, r));
  ASSERT_TRUE(o.finish);
  EXPECT_EQ(*o.finish, FinishReason::kStop);
  EXPECT_TRUE(o.text == "yes" || o.text == "no") << o.text;
}

// A grammar no token can continue (an empty class) ends the request with an error event,
// never a crash or a token outside the grammar.
TEST_F(ConstrainedEngineTest, DeadEndGrammarEndsWithAnError) {
  Engine engine(random_model(small_config(), 21), tok, config());
  Request r{{5, 6, 7}, {}};
  r.params.temperature = 1.0f;
  r.params.max_tokens = 10;
  r.params.grammar = compile(R"(root ::= "a" [^\x00-\U0010FFFF])");
  Output o = collect(*submit_ok(engine, r));
  EXPECT_EQ(o.finish_events, 1);
  ASSERT_TRUE(o.finish);
  EXPECT_EQ(*o.finish, FinishReason::kError);
  EXPECT_EQ(o.text, "a");
}

TEST_F(ConstrainedEngineTest, LogprobsDescribeTheConstrainedDistribution) {
  Engine engine(random_model(small_config(), 21), tok, config());
  auto g = compile(R"(root ::= [0-9]+ "." [0-9]+)");
  Request r{{9, 10, 11}, {}};
  r.params.temperature = 1.0f;
  r.params.seed = 4;
  r.params.max_tokens = 6;
  r.params.logprobs = 5;
  r.params.grammar = g;
  Output o = collect(*submit_ok(engine, r));
  ASSERT_TRUE(o.finish);
  ASSERT_NE(*o.finish, FinishReason::kError);
  ASSERT_FALSE(o.tokens.empty());
  ASSERT_EQ(o.logprobs.size(), o.tokens.size());
  GrammarMatcher m(g);
  std::vector<uint32_t> words(m.mask_words());
  for (size_t i = 0; i < o.tokens.size(); ++i) {
    m.fill_next_token_bitmask(words.data());
    double mass = 0;
    for (const auto& [id, lp] : o.logprobs[i].top) {
      if (std::isfinite(lp)) {
        EXPECT_TRUE(words[id / 32] >> (id % 32) & 1) << "disallowed token " << id << " in top";
        mass += std::exp(lp);
      }
    }
    EXPECT_LE(mass, 1.0 + 1e-4);
    EXPECT_TRUE(std::isfinite(o.logprobs[i].logprob));
    ASSERT_TRUE(m.accept_token(o.tokens[i]));
  }
}

// Preemption recomputes a sequence's KV, never its matcher: seeded constrained requests give
// the same tokens in a cache so small that they are preempted as in one where they are not.
TEST_F(ConstrainedEngineTest, PreemptionAndRecomputeKeepTheMatcher) {
  auto run = [&](EngineConfig c, uint64_t* preemptions) {
    Engine engine(random_model(small_config(), 21), tok, c);
    auto g = compile(kGrammars[1]);
    std::mt19937 rng(6);
    std::vector<std::unique_ptr<RequestStream>> streams;
    for (int i = 0; i < 12; ++i) {
      Request r{random_prompt(rng, 4 + i % 9, 512), {}};
      r.params.temperature = 1.0f;
      r.params.seed = 50 + i;
      r.params.max_tokens = 24;
      r.params.grammar = g;
      streams.push_back(submit_ok(engine, r));
    }
    std::vector<Output> out;
    for (auto& s : streams) out.push_back(collect(*s));
    *preemptions = engine.stats().preemptions_total;
    return out;
  };
  uint64_t p_small = 0, p_big = 0;
  auto small = run(config(10, 8), &p_small);
  auto big = run(config(), &p_big);
  EXPECT_GT(p_small, 0u);
  EXPECT_EQ(p_big, 0u);
  ASSERT_EQ(small.size(), big.size());
  auto g = compile(kGrammars[1]);
  for (size_t i = 0; i < small.size(); ++i) {
    EXPECT_EQ(small[i].tokens, big[i].tokens) << "request " << i;
    EXPECT_EQ(small[i].finish_events, 1);
    EXPECT_TRUE(tokens_match(g, small[i].tokens, false));
  }
}

// Several choices of one prompt (the API submits n requests) share the compiled grammar, each
// with its own matcher; an unconstrained request in the same batch samples as it would alone.
TEST_F(ConstrainedEngineTest, ChoicesShareTheGrammarAndUnconstrainedRowsAreUnaffected) {
  Request free_req{{20, 21, 22, 23}, {}};
  free_req.params.temperature = 1.0f;
  free_req.params.seed = 77;
  free_req.params.max_tokens = 16;
  free_req.params.ignore_eos = true;
  Engine engine(random_model(small_config(), 21), tok, config());
  Output alone = collect(*submit_ok(engine, free_req));

  auto g = compile(kGrammars[2]);
  std::vector<std::unique_ptr<RequestStream>> choices;
  for (int i = 0; i < 4; ++i) {
    Request r{{20, 21, 22, 23}, {}};
    r.params.temperature = 1.0f;
    r.params.seed = 300 + i;
    r.params.max_tokens = 30;
    r.params.grammar = g;
    choices.push_back(submit_ok(engine, r));
  }
  auto free_stream = submit_ok(engine, free_req);
  std::set<std::string> texts;
  for (auto& s : choices) {
    Output o = collect(*s);
    EXPECT_EQ(o.finish_events, 1);
    std::vector<int32_t> body = o.tokens;
    if (*o.finish == FinishReason::kStop && !body.empty() && body.back() == 2) body.pop_back();
    EXPECT_TRUE(tokens_match(g, body, *o.finish == FinishReason::kStop)) << o.text;
    texts.insert(o.text);
  }
  EXPECT_GT(texts.size(), 1u);  // separate matchers and RNGs: the choices differ
  Output batched = collect(*free_stream);
  EXPECT_EQ(batched.tokens, alone.tokens);
}

}  // namespace
}  // namespace ps
