#pragma once
// A model stand-in for scheduler tests. Its "K/V" of a token is (token id, position), written
// to the slot the plan names; its next token is a hash of the whole context read back through
// the block table. So a wrong slot, a wrong block table, a stale prefix-cache block or a bad
// recompute after preemption changes the output, exactly as it would with a real model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "scheduler/scheduler.h"

namespace ps::testing {

inline constexpr int32_t kVocab = 1000;

inline uint64_t fold(uint64_t h, int32_t token) {
  h ^= static_cast<uint32_t>(token) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

// The next token after `context`, computed without any cache: the reference.
inline int32_t reference_next(const std::vector<int32_t>& context) {
  uint64_t h = 1469598103934665603ULL;
  for (int32_t t : context) h = fold(h, t);
  return static_cast<int32_t>((h >> 17) % kVocab);
}

// Greedy output of a request run alone, without a scheduler.
inline std::vector<int32_t> reference_output(std::vector<int32_t> tokens, int32_t max_tokens) {
  std::vector<int32_t> out;
  for (int32_t i = 0; i < max_tokens; ++i) {
    out.push_back(reference_next(tokens));
    tokens.push_back(out.back());
  }
  return out;
}

// Checks that `plan` is a well-formed packed batch for `sched`'s current state (call right
// after schedule()). Uses gtest assertions; returns with a failure recorded on the first issue.
inline void check_plan(const StepPlan& plan, const Scheduler& sched) {
  const int32_t bs = sched.config().block_size;
  const int32_t S = plan.num_seqs();
  const int32_t T = plan.num_tokens();
  const int32_t mb = plan.max_blocks_per_seq;
  ASSERT_LE(S, sched.config().max_num_seqs);
  ASSERT_LE(T, sched.config().max_batched_tokens);
  ASSERT_EQ(plan.positions.size(), static_cast<size_t>(T));
  ASSERT_EQ(plan.slot_mapping.size(), static_cast<size_t>(T));
  ASSERT_EQ(plan.query_start.size(), static_cast<size_t>(S + 1));
  ASSERT_EQ(plan.context_len.size(), static_cast<size_t>(S));
  ASSERT_EQ(plan.block_tables.size(), static_cast<size_t>(S) * mb);
  ASSERT_EQ(plan.query_start.front(), 0);
  ASSERT_EQ(plan.query_start.back(), T);
  ASSERT_EQ(plan.num_prefill_tokens + plan.num_decode_tokens, T);
  ASSERT_TRUE(std::is_sorted(plan.sample_indices.begin(), plan.sample_indices.end()));

  // Blocks of sequences not in the plan must not be written.
  std::set<int32_t> written_blocks, slots;
  std::set<SeqId> ids;
  size_t next_sample = 0;
  for (int32_t s = 0; s < S; ++s) {
    const Sequence* seq = sched.find(plan.seq_ids[s]);
    ASSERT_NE(seq, nullptr);
    ASSERT_EQ(seq->status(), SeqStatus::kRunning);
    ASSERT_TRUE(ids.insert(seq->id()).second) << "sequence scheduled twice";
    ASSERT_TRUE(std::find(plan.preempted.begin(), plan.preempted.end(), seq->id()) ==
                plan.preempted.end());
    const int32_t begin = plan.query_start[s], end = plan.query_start[s + 1];
    ASSERT_LT(begin, end) << "a scheduled sequence has no token";
    const int32_t ctx = plan.context_len[s];
    ASSERT_EQ(ctx, seq->num_computed_tokens() + (end - begin));
    ASSERT_LE(ctx, seq->num_tokens());
    const auto& table = seq->block_table();
    ASSERT_LE(table.size(), static_cast<size_t>(mb));
    ASSERT_GE(table.size() * bs, static_cast<size_t>(ctx));
    for (int32_t b = 0; b < mb; ++b) {
      const int32_t got = plan.block_tables[static_cast<size_t>(s) * mb + b];
      ASSERT_EQ(got, b < static_cast<int32_t>(table.size()) ? table[b] : -1);
    }
    for (int32_t r = begin; r < end; ++r) {
      const int32_t pos = ctx - (end - r);
      ASSERT_EQ(plan.positions[r], pos);
      ASSERT_EQ(plan.token_ids[r], seq->tokens()[pos]);
      ASSERT_EQ(plan.slot_mapping[r], table[pos / bs] * bs + pos % bs);
      ASSERT_TRUE(slots.insert(plan.slot_mapping[r]).second) << "slot written twice";
      written_blocks.insert(table[pos / bs]);
    }
    const bool samples = ctx == seq->num_tokens();
    const bool listed =
        next_sample < plan.sample_indices.size() && plan.sample_indices[next_sample] == s;
    ASSERT_EQ(samples, listed) << "sample_indices wrong for row " << s;
    if (listed) ++next_sample;
  }
  ASSERT_EQ(next_sample, plan.sample_indices.size());
  // Written blocks are private to their writer: no other running sequence holds them.
  for (SeqId id : sched.running_ids()) {
    if (ids.count(id)) continue;
    for (int32_t b : sched.find(id)->block_table()) ASSERT_EQ(written_blocks.count(b), 0u);
  }
  for (SeqId id : plan.preempted) {
    const Sequence* seq = sched.find(id);
    ASSERT_NE(seq, nullptr);
    ASSERT_EQ(seq->status(), SeqStatus::kWaiting);
    ASSERT_TRUE(seq->block_table().empty());
  }
}

class FakeModel {
 public:
  explicit FakeModel(const SchedulerConfig& config)
      : block_size_(config.block_size),
        kv_(static_cast<size_t>(config.num_blocks) * config.block_size) {}

  // Writes the plan's K/V and returns one token per sample index.
  std::vector<int32_t> run(const StepPlan& plan) {
    for (int32_t r = 0; r < plan.num_tokens(); ++r) {
      kv_.at(plan.slot_mapping[r]) = {plan.token_ids[r], plan.positions[r]};
    }
    std::vector<int32_t> sampled;
    for (int32_t s : plan.sample_indices) {
      uint64_t h = 1469598103934665603ULL;
      const int32_t mb = plan.max_blocks_per_seq;
      for (int32_t pos = 0; pos < plan.context_len[s]; ++pos) {
        const int32_t block = plan.block_tables.at(static_cast<size_t>(s) * mb + pos / block_size_);
        const Entry& e = kv_.at(static_cast<size_t>(block) * block_size_ + pos % block_size_);
        EXPECT_EQ(e.pos, pos) << "stale or unwritten K/V read by sequence " << plan.seq_ids[s];
        h = fold(h, e.token);
      }
      sampled.push_back(static_cast<int32_t>((h >> 17) % kVocab));
    }
    return sampled;
  }

 private:
  struct Entry {
    int32_t token = -1;
    int32_t pos = -1;
  };
  int32_t block_size_;
  std::vector<Entry> kv_;
};

// One engine step: schedule, check the plan, run the model, postprocess, check integrity.
inline StepPlan run_step(Scheduler& sched, FakeModel& model) {
  StepPlan plan = sched.schedule();
  check_plan(plan, sched);
  sched.postprocess(plan, model.run(plan));
  sched.check_integrity();
  return plan;
}

// Finishes every sequence sampled in `plan` that reached its max_tokens; records its output.
inline void finish_done(Scheduler& sched, const StepPlan& plan,
                        const std::map<SeqId, int32_t>& max_tokens,
                        std::map<SeqId, std::vector<int32_t>>& outputs) {
  for (int32_t s : plan.sample_indices) {
    const Sequence* seq = sched.find(plan.seq_ids[s]);
    if (seq == nullptr || seq->num_output_tokens() < max_tokens.at(seq->id())) continue;
    outputs[seq->id()].assign(seq->output_tokens().begin(), seq->output_tokens().end());
    sched.finish(seq->id());
  }
}

// Steps until nothing is left (or max_steps), finishing sequences at their max_tokens.
inline void drain(Scheduler& sched, FakeModel& model, const std::map<SeqId, int32_t>& max_tokens,
                  std::map<SeqId, std::vector<int32_t>>& outputs, int32_t max_steps = 10000) {
  for (int32_t i = 0; i < max_steps && sched.has_unfinished(); ++i) {
    const StepPlan plan = run_step(sched, model);
    finish_done(sched, plan, max_tokens, outputs);
    sched.check_integrity();
  }
  EXPECT_FALSE(sched.has_unfinished()) << "not drained after " << max_steps << " steps";
}

}  // namespace ps::testing
