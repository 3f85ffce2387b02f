// Speculative drafts in the scheduler: n-gram drafts planned after the committed tokens,
// verified by a model stand-in, accepted prefixes kept, rejected slots rolled back, and outputs
// equal to decoding one token per step.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "scheduler/scheduler.h"
#include "tests/iota_tokens.h"
#include "tests/scheduler/fake_model.h"

namespace ps {
namespace {

using testing::check_plan;
using testing::fold;
using testing::iota_tokens;

constexpr int32_t kPeriod = 5;

// Next token of a context: mostly a copy of the token kPeriod back (so prompt lookup predicts
// it), but one time in four a hash of the whole context (so some drafts are wrong).
int32_t copy_model_next(const std::vector<int32_t>& context) {
  uint64_t h = 1469598103934665603ULL;
  for (int32_t t : context) h = fold(h, t);
  const auto n = static_cast<int32_t>(context.size());
  if ((h >> 11) % 4 == 0 || n < kPeriod) return static_cast<int32_t>((h >> 17) % 1000);
  return context[n - kPeriod];
}

std::vector<int32_t> reference(std::vector<int32_t> tokens, int32_t max_tokens) {
  std::vector<int32_t> out;
  while (static_cast<int32_t>(out.size()) < max_tokens) {
    out.push_back(copy_model_next(tokens));
    tokens.push_back(out.back());
  }
  return out;
}

// The copy model over the paged "K/V" (token, position), one answer per logit row, each row
// reading its context through the block table up to its own position. Then the verification
// the engine does: keep the draft while the model agrees, then the model's token.
class CopyModel {
 public:
  explicit CopyModel(const SchedulerConfig& c)
      : bs_(c.block_size), kv_(static_cast<size_t>(c.num_blocks) * c.block_size) {}

  std::vector<std::vector<int32_t>> run_and_verify(const StepPlan& plan) {
    for (int32_t r = 0; r < plan.num_tokens(); ++r) {
      kv_.at(plan.slot_mapping[r]) = {plan.token_ids[r], plan.positions[r]};
    }
    std::vector<std::vector<int32_t>> verified;
    for (size_t i = 0; i < plan.sample_indices.size(); ++i) {
      const int32_t s = plan.sample_indices[i];
      const int32_t d = plan.drafts_of(i);
      const int32_t end = plan.query_start[s + 1];
      std::vector<int32_t> kept;
      for (int32_t j = 0; j <= d; ++j) {
        const int32_t row = end - 1 - d + j;
        std::vector<int32_t> context;
        for (int32_t pos = 0; pos <= plan.positions[row]; ++pos) {
          const int32_t block =
              plan.block_tables.at(static_cast<size_t>(s) * plan.max_blocks_per_seq + pos / bs_);
          const Entry& e = kv_.at(static_cast<size_t>(block) * bs_ + pos % bs_);
          EXPECT_EQ(e.pos, pos) << "stale K/V read by sequence " << plan.seq_ids[s];
          context.push_back(e.token);
        }
        kept.push_back(copy_model_next(context));
        if (j == d || kept.back() != plan.token_ids[row + 1]) break;
        ++accepted;
      }
      drafted += d;
      verified.push_back(kept);
    }
    return verified;
  }

  int64_t drafted = 0, accepted = 0;

 private:
  struct Entry {
    int32_t token = -1, pos = -1;
  };
  int32_t bs_;
  std::vector<Entry> kv_;
};

SchedulerConfig spec_config(int32_t blocks, int32_t bs, int32_t k, int32_t disable_above = 0) {
  SchedulerConfig c;
  c.num_blocks = blocks;
  c.block_size = bs;
  c.max_num_seqs = 16;
  c.max_batched_tokens = 256;
  c.speculative.num_speculative_tokens = k;
  c.speculative.ngram_max = 3;
  c.speculative.disable_by_batch_size = disable_above;
  return c;
}

struct RunResult {
  std::map<SeqId, std::vector<int32_t>> outputs;
  int64_t drafted = 0, accepted = 0, steps = 0, preemptions = 0;
};

// Runs prompts to max_tokens each (allowing speculation up to prompt + max_tokens), checking
// the plan, the block accounting after each rollback, and integrity every step.
RunResult run_all(const SchedulerConfig& config, const std::vector<std::vector<int32_t>>& prompts,
                  int32_t max_tokens) {
  Scheduler sched(config);
  CopyModel model(config);
  RunResult r;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto id = static_cast<SeqId>(i + 1);
    sched.add(id, prompts[i]);
    sched.allow_speculation(id, static_cast<int32_t>(prompts[i].size()) + max_tokens);
  }
  while (sched.has_unfinished() && r.steps < 10000) {
    StepPlan plan = sched.schedule();
    ++r.steps;
    EXPECT_EQ(plan.num_prefill_tokens + plan.num_decode_tokens, plan.num_tokens());
    EXPECT_LE(plan.num_tokens(), config.max_batched_tokens);
    if (!plan.num_draft_tokens.empty()) {
      EXPECT_EQ(plan.num_draft_tokens.size(), plan.sample_indices.size());
    }
    for (size_t i = 0; i < plan.sample_indices.size(); ++i) {
      const Sequence* seq = sched.find(plan.seq_ids[plan.sample_indices[i]]);
      EXPECT_LE(seq->num_tokens() + plan.drafts_of(i), seq->speculation_limit());
      EXPECT_LE(plan.drafts_of(i), config.speculative.num_speculative_tokens);
    }
    const auto verified = model.run_and_verify(plan);
    sched.postprocess_verified(plan, verified);
    sched.check_integrity();
    for (SeqId id : sched.running_ids()) {
      // Rolled back: a running sequence holds exactly the blocks of its computed tokens.
      const Sequence* seq = sched.find(id);
      if (seq->num_computed_tokens() == 0) continue;
      EXPECT_EQ(static_cast<int32_t>(seq->block_table().size()),
                sched.block_manager().blocks_for_tokens(seq->num_computed_tokens()))
          << "sequence " << id;
    }
    for (int32_t s : plan.sample_indices) {
      const Sequence* seq = sched.find(plan.seq_ids[s]);
      if (seq == nullptr || seq->num_output_tokens() < max_tokens) continue;
      auto out = seq->output_tokens();
      // A step may keep tokens past max_tokens (the engine's stop checker cuts them).
      r.outputs[seq->id()].assign(out.begin(), out.begin() + max_tokens);
      sched.finish(seq->id());
    }
  }
  r.drafted = model.drafted;
  r.accepted = model.accepted;
  r.preemptions = static_cast<int64_t>(sched.num_preemptions());
  EXPECT_EQ(sched.block_manager().num_active_blocks(), 0);
  return r;
}

std::vector<std::vector<int32_t>> periodic_prompts(int32_t n) {
  std::vector<std::vector<int32_t>> prompts;
  for (int32_t i = 0; i < n; ++i) {
    std::vector<int32_t> p;
    const int32_t len = 3 + (i * 7) % 20;
    for (int32_t j = 0; j < len; ++j) p.push_back(100 + i * 10 + j % kPeriod);
    prompts.push_back(p);
  }
  return prompts;
}

void expect_reference_outputs(const RunResult& r, const std::vector<std::vector<int32_t>>& prompts,
                              int32_t max_tokens) {
  ASSERT_EQ(r.outputs.size(), prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(r.outputs.at(static_cast<SeqId>(i + 1)), reference(prompts[i], max_tokens))
        << "prompt " << i;
  }
}

TEST(SpeculativeScheduling, OutputsEqualOneTokenPerStepAndDraftsAreBothAcceptedAndRejected) {
  const auto prompts = periodic_prompts(12);
  const RunResult spec = run_all(spec_config(256, 4, 4), prompts, 40);
  expect_reference_outputs(spec, prompts, 40);
  EXPECT_GT(spec.accepted, 0);
  EXPECT_GT(spec.drafted, spec.accepted);  // rejections happened and were rolled back
  const RunResult plain = run_all(spec_config(256, 4, 0), prompts, 40);
  expect_reference_outputs(plain, prompts, 40);
  EXPECT_EQ(plain.drafted, 0);
  EXPECT_LT(spec.steps, plain.steps);
}

TEST(SpeculativeScheduling, WithoutSpeculationThePlanHasNoDraftRows) {
  Scheduler sched(spec_config(64, 4, 4));
  sched.add(1, {1, 2, 1, 2, 1, 2});  // never allow_speculation()
  CopyModel model(sched.config());
  for (int step = 0; step < 6; ++step) {
    StepPlan plan = sched.schedule();
    check_plan(plan, sched);  // the pre-speculation checks hold unchanged
    EXPECT_TRUE(plan.num_draft_tokens.empty());
    sched.postprocess_verified(plan, model.run_and_verify(plan));
  }
}

TEST(SpeculativeScheduling, ATinyPoolStillPreemptsAndRecomputesCorrectly) {
  // 24 blocks of 4 for 8 sequences growing to ~60 tokens each: preemption is certain. Drafts
  // only take blocks nobody else needs, and outputs stay the reference.
  const auto prompts = periodic_prompts(8);
  const RunResult r = run_all(spec_config(24, 4, 6), prompts, 36);
  expect_reference_outputs(r, prompts, 36);
  EXPECT_GT(r.preemptions, 0);
  EXPECT_GT(r.accepted, 0);
}

TEST(SpeculativeScheduling, LargeBatchesDoNotDraft) {
  const auto prompts = periodic_prompts(6);
  // Six sequences decode together; drafts are off above two sequences per step.
  const RunResult r = run_all(spec_config(256, 4, 4, /*disable_above=*/2), prompts, 30);
  expect_reference_outputs(r, prompts, 30);
  Scheduler sched(spec_config(256, 4, 4, 2));
  CopyModel model(sched.config());
  for (SeqId id = 1; id <= 3; ++id) {
    sched.add(id, {7, 8, 7, 8, 7, 8, 7});
    sched.allow_speculation(id, 100);
  }
  for (int step = 0; step < 5; ++step) {
    StepPlan plan = sched.schedule();
    EXPECT_TRUE(plan.num_draft_tokens.empty()) << "step " << step;
    sched.postprocess_verified(plan, model.run_and_verify(plan));
  }
}

TEST(SpeculativeScheduling, DraftsStopAtTheSequenceLimitAndTheTokenBudget) {
  SchedulerConfig c = spec_config(64, 4, 8);
  c.max_batched_tokens = 4;
  Scheduler sched(c);
  sched.add(1, {1, 2, 3, 1, 2, 3, 1, 2});
  sched.allow_speculation(1, 12);
  StepPlan plan = sched.schedule();  // 4 of the 8 prompt tokens: nothing sampled
  sched.postprocess_verified(plan, {});
  plan = sched.schedule();  // the other 4: a chunk, not a decode, so no draft
  EXPECT_TRUE(plan.num_draft_tokens.empty());
  sched.postprocess_verified(plan, {{3}});
  ASSERT_EQ(sched.find(1)->num_tokens(), 9);  // 1 2 3 1 2 3 1 2 3
  plan = sched.schedule();
  // Lookup proposes 1 2 3; the limit of 12 tokens leaves room for 3, the budget of 4 too.
  ASSERT_EQ(plan.num_draft_tokens.size(), 1u);
  EXPECT_EQ(plan.num_draft_tokens[0], 3);
  EXPECT_EQ(plan.token_ids, (std::vector<int32_t>{3, 1, 2, 3}));
  EXPECT_EQ(plan.positions, (std::vector<int32_t>{8, 9, 10, 11}));
  EXPECT_EQ(plan.context_len, std::vector<int32_t>{12});
  EXPECT_EQ(plan.num_decode_tokens, 4);
  EXPECT_EQ(plan.logit_rows(), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(sched.find(1)->block_table().size(), 3u);
  // The model disagreed at once: only its own token is kept, the three slots roll back.
  sched.postprocess_verified(plan, {{7}});
  EXPECT_EQ(sched.find(1)->num_tokens(), 10);
  EXPECT_EQ(sched.find(1)->num_computed_tokens(), 9);
  EXPECT_EQ(sched.find(1)->block_table().size(), 3u);  // slot 8 is still in the third block
  sched.check_integrity();
  // Next step: one draft at most (limit 12 - 10 tokens = 2, lookup of "7" finds nothing).
  plan = sched.schedule();
  EXPECT_TRUE(plan.num_draft_tokens.empty());
}

TEST(SpeculativeScheduling, AcceptedDraftsAdvanceAndRejectedBlocksAreFreed) {
  SchedulerConfig c = spec_config(64, 4, 6);
  Scheduler sched(c);
  sched.add(1, {1, 2, 3, 4, 5, 6, 1, 2});
  sched.allow_speculation(1, 64);
  StepPlan plan = sched.schedule();
  sched.postprocess_verified(plan, {{3}});  // 1 2 3 4 5 6 1 2 3
  const int32_t free_before = sched.block_manager().num_free_blocks();
  plan = sched.schedule();
  ASSERT_EQ(plan.num_draft_tokens, std::vector<int32_t>{6});  // 4 5 6 1 2 3
  EXPECT_EQ(sched.find(1)->block_table().size(), 4u);         // 15 slots
  // Two drafts accepted (4 5), then the model's 9.
  sched.postprocess_verified(plan, {{4, 5, 9}});
  const Sequence* seq = sched.find(1);
  EXPECT_EQ(std::vector<int32_t>(seq->output_tokens().begin(), seq->output_tokens().end()),
            (std::vector<int32_t>{3, 4, 5, 9}));
  EXPECT_EQ(seq->num_computed_tokens(), 11);
  EXPECT_EQ(seq->block_table().size(), 3u);  // the fourth block held only rejected drafts
  EXPECT_EQ(sched.block_manager().num_free_blocks(), free_before - 1);
  sched.check_integrity();
}

TEST(SpeculativeScheduling, PostprocessRefusesTokensThatContradictTheDraft) {
  Scheduler sched(spec_config(64, 4, 4));
  sched.add(1, {5, 6, 5, 6, 5});
  sched.allow_speculation(1, 50);
  StepPlan plan = sched.schedule();
  sched.postprocess_verified(plan, {{6}});  // 5 6 5 6 5 6: lookup proposes 5 6
  plan = sched.schedule();
  ASSERT_EQ(plan.num_draft_tokens, std::vector<int32_t>{2});
  // Two tokens kept, but the first is not the draft token 5: the verifier is broken.
  EXPECT_THROW(sched.postprocess_verified(plan, {{4, 3}}), std::logic_error);
}

}  // namespace
}  // namespace ps
