// Speculative decoding (n-gram drafts) through the engine's public API: every request's
// events — tokens, text, finish reason, logprobs — equal those of the same engine without
// speculation, for greedy and seeded sampling, with stops, max_tokens, penalties, min_tokens,
// and under preemption; the spec_decode counters show drafts were both accepted and rejected.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "engine/engine.h"
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

struct Events {
  std::vector<int32_t> tokens;
  std::string text;
  std::vector<float> logprobs;
  std::vector<std::vector<std::pair<int32_t, float>>> tops;
  int finish_events = 0;
  std::vector<int32_t> completion_counts;  // completion_tokens of every event
  RequestOutput last;
};

Events collect(RequestStream& stream) {
  Events e;
  RequestOutput ev;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (!stream.finished() && std::chrono::steady_clock::now() < deadline) {
    if (!stream.next(&ev, 100ms)) continue;
    e.tokens.insert(e.tokens.end(), ev.token_ids.begin(), ev.token_ids.end());
    e.text += ev.text;
    for (const TokenLogprob& lp : ev.logprobs) {
      e.logprobs.push_back(lp.logprob);
      e.tops.push_back(lp.top);
    }
    e.completion_counts.push_back(ev.completion_tokens);
    if (ev.finish) {
      ++e.finish_events;
      e.last = ev;
    }
  }
  return e;
}

EngineConfig base_config(int32_t num_speculative_tokens) {
  EngineConfig c;
  c.num_blocks = 256;
  c.block_size = 16;
  c.max_num_seqs = 32;
  c.check_integrity_every_step = true;
  // Rows of our packed kernel do not depend on the batch (nor on how many rows a sequence
  // brings), so logits, and with them greedy and seeded tokens, are bitwise comparable.
  c.runner.linear_mode = LinearMode::packed;
  c.speculative.num_speculative_tokens = num_speculative_tokens;
  c.speculative.ngram_max = 3;
  c.speculative.disable_by_batch_size = 0;  // draft in every batch: the harder case
  return c;
}

// Submits all requests at once (one batch) and collects each one's events.
std::vector<Events> run_batch(Engine& engine, const std::vector<Request>& requests) {
  std::vector<std::unique_ptr<RequestStream>> streams;
  for (const Request& r : requests) {
    SubmitResult res = engine.submit(r);
    if (auto* err = std::get_if<SubmitError>(&res)) {
      ADD_FAILURE() << "submit failed: " << err->message;
      return {};
    }
    streams.push_back(std::move(std::get<std::unique_ptr<RequestStream>>(res)));
  }
  std::vector<Events> out;
  for (auto& s : streams) out.push_back(collect(*s));
  return out;
}

void expect_same_events(const std::vector<Events>& spec, const std::vector<Events>& plain) {
  ASSERT_EQ(spec.size(), plain.size());
  for (size_t i = 0; i < spec.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(spec[i].finish_events, 1);
    EXPECT_EQ(spec[i].tokens, plain[i].tokens);
    EXPECT_EQ(spec[i].text, plain[i].text);
    EXPECT_EQ(spec[i].logprobs, plain[i].logprobs);
    EXPECT_EQ(spec[i].tops, plain[i].tops);
    // One event per token, as without speculation (streams look the same).
    EXPECT_EQ(spec[i].completion_counts, plain[i].completion_counts);
    ASSERT_TRUE(spec[i].last.finish && plain[i].last.finish);
    EXPECT_EQ(*spec[i].last.finish, *plain[i].last.finish);
    EXPECT_EQ(spec[i].last.finish_detail, plain[i].last.finish_detail);
  }
}

// Prompts of mixed lengths; half repeat a span (prompt lookup has something to find at once).
std::vector<Request> mixed_prompts(std::mt19937& rng, int n, int32_t max_tokens) {
  std::vector<Request> out;
  for (int i = 0; i < n; ++i) {
    std::vector<int32_t> p = random_prompt(rng, 1 + (i * 11) % 40, 512);
    if (i % 2 == 1) p.insert(p.end(), p.begin(), p.end());
    Request r{p, {}};
    r.params.temperature = 0;
    r.params.max_tokens = max_tokens - (i % 5) * 3;
    r.params.ignore_eos = true;
    out.push_back(r);
  }
  return out;
}

class SpeculativeDecoding : public ::testing::Test {
 protected:
  LoadedModel model = random_model(small_config(), 21);
  std::vector<Events> run(const EngineConfig& c, const std::vector<Request>& requests,
                          EngineStats* stats = nullptr) {
    Engine engine(model, small_tokenizer(), c);
    auto events = run_batch(engine, requests);
    expect_settled(engine);
    if (stats) *stats = engine.stats();
    return events;
  }
};

TEST_F(SpeculativeDecoding, GreedyBatchOfMixedLengthsIsIdenticalWithAndWithout) {
  std::mt19937 rng(11);
  const auto requests = mixed_prompts(rng, 24, 48);
  EngineStats spec_stats, plain_stats;
  const auto spec = run(base_config(4), requests, &spec_stats);
  const auto plain = run(base_config(0), requests, &plain_stats);
  expect_same_events(spec, plain);
  // Not vacuous: drafts were verified, some accepted and some rejected (rolled back).
  EXPECT_GT(spec_stats.spec_decode_num_accepted_tokens, 0u);
  EXPECT_GT(spec_stats.spec_decode_num_draft_tokens, spec_stats.spec_decode_num_accepted_tokens);
  EXPECT_GT(spec_stats.spec_decode_num_drafts, 0u);
  EXPECT_EQ(plain_stats.spec_decode_num_draft_tokens, 0u);
  EXPECT_EQ(spec_stats.generation_tokens_total, plain_stats.generation_tokens_total);
  // Accepted drafts mean fewer steps for the same tokens.
  EXPECT_LT(spec_stats.steps_total, plain_stats.steps_total);
}

TEST_F(SpeculativeDecoding, StopsMaxTokensAndPenaltiesEndWhereTheyWouldWithout) {
  std::mt19937 rng(12);
  auto requests = mixed_prompts(rng, 16, 40);
  // Learn each request's plain output, then stop it inside: at a stop token, at a stop string
  // taken from the middle of its text, at a short max_tokens; others get penalties,
  // min_tokens (which suppresses stop ids, so it must move with the accepted tokens) and
  // logprobs.
  const auto full = run(base_config(0), requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    SamplingParams& p = requests[i].params;
    const std::vector<int32_t>& out = full[i].tokens;
    ASSERT_GE(out.size(), 12u);
    switch (i % 6) {
      case 0:
        p.stop_token_ids = {out[7]};
        break;
      case 1: {
        // Two characters from the second half of the text (cut at UTF-8 character starts,
        // so the stop string is valid UTF-8; it may span a token boundary).
        const std::string& text = full[i].text;
        auto starts_char = [&](size_t at) { return (text[at] & 0xC0) != 0x80; };
        size_t from = text.size() / 2;
        while (from < text.size() && !starts_char(from)) ++from;
        size_t to = from + 1, chars = 1;
        while (to < text.size() && (chars < 2 || !starts_char(to))) {
          if (starts_char(to)) ++chars;
          ++to;
        }
        if (from < text.size()) p.stop = {text.substr(from, to - from)};
        EXPECT_FALSE(p.stop.empty()) << "empty text";
        break;
      }
      case 2:
        p.max_tokens = 5 + static_cast<int32_t>(i % 4);
        break;
      case 3:
        p.repetition_penalty = 1.3f;
        p.frequency_penalty = 0.5f;
        break;
      case 4:
        p.stop_token_ids = {out[2], out[6]};
        p.min_tokens = 5;
        break;
      case 5:
        p.logprobs = 3;
        p.presence_penalty = -0.5f;
        break;
    }
  }
  EngineStats stats;
  const auto spec = run(base_config(5), requests, &stats);
  const auto plain = run(base_config(0), requests);
  expect_same_events(spec, plain);
  EXPECT_GT(stats.spec_decode_num_accepted_tokens, 0u);
  int stopped = 0;
  for (const Events& e : plain) stopped += *e.last.finish == FinishReason::kStop ? 1 : 0;
  EXPECT_GE(stopped, 4);  // the stop cases really stopped
}

TEST_F(SpeculativeDecoding, SeededSamplingIsIdenticalWithAndWithout) {
  std::mt19937 rng(13);
  auto requests = mixed_prompts(rng, 12, 40);
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].params.temperature = 0.3f + 0.1f * static_cast<float>(i % 4);
    requests[i].params.top_p = i % 3 == 0 ? 0.9f : 1.0f;
    requests[i].params.top_k = i % 3 == 1 ? 20 : 0;
    requests[i].params.seed = 1000 + i;
  }
  EngineStats stats;
  const auto spec = run(base_config(4), requests, &stats);
  const auto plain = run(base_config(0), requests);
  expect_same_events(spec, plain);
  EXPECT_GT(stats.spec_decode_num_accepted_tokens, 0u);
}

TEST_F(SpeculativeDecoding, PreemptionUnderATinyKvPoolKeepsOutputsIdentical) {
  std::mt19937 rng(14);
  auto requests = mixed_prompts(rng, 12, 60);
  EngineConfig spec_cfg = base_config(6), plain_cfg = base_config(0);
  // 24 blocks of 8 tokens for 12 requests of up to 140 tokens: they preempt each other.
  for (EngineConfig* c : {&spec_cfg, &plain_cfg}) {
    c->num_blocks = 24;
    c->block_size = 8;
  }
  EngineStats stats;
  const auto spec = run(spec_cfg, requests, &stats);
  const auto plain = run(plain_cfg, requests);
  expect_same_events(spec, plain);
  EXPECT_GT(stats.preemptions_total, 0u);
  EXPECT_GT(stats.spec_decode_num_accepted_tokens, 0u);
}

TEST_F(SpeculativeDecoding, BadSpeculativeConfigIsRefusedAtStart) {
  EngineConfig c = base_config(4);
  c.speculative.ngram_min = 0;
  EXPECT_THROW(Engine(model, small_tokenizer(), c), std::invalid_argument);
  c = base_config(4);
  c.speculative.ngram_max = 1;
  c.speculative.ngram_min = 2;
  EXPECT_THROW(Engine(model, small_tokenizer(), c), std::invalid_argument);
  c = base_config(-1);
  EXPECT_THROW(Engine(model, small_tokenizer(), c), std::invalid_argument);
}

}  // namespace
}  // namespace ps
