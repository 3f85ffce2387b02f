#pragma once
// CUDA-graph batch-size buckets for decode-only steps (issue #19): a graph is captured per
// bucket (1, 2, 4, ..., 256) and a step of n sequences replays the smallest bucket >= n with
// the rows past n padded (slot -1: no K/V write; context 1: one key). Mixed prefill steps, and
// decode steps past the largest bucket, run eagerly. Pure, tested without a GPU.
#include <cstddef>  // size_t, which scheduler/step_plan.h uses unqualified
#include <cstdint>
#include <vector>

#include "scheduler/step_plan.h"

namespace ps {

// 1, 2, 4, ... up to and including the largest power of two <= max_bucket (at most 256).
std::vector<int32_t> graph_buckets(int32_t max_bucket = 256);

// The bucket a step of `num_seqs` decode rows replays, or 0: run eagerly.
int32_t graph_bucket_for(int32_t num_seqs, const std::vector<int32_t>& buckets);

// A step a captured graph can run: every sequence has exactly one new token and samples it,
// no speculative drafts, no adapters.
bool is_graph_eligible(const StepPlan& plan);

// The plan a bucket's graph replays: an eligible plan of S <= bucket sequences, block tables
// widened to `width` columns (>= plan.max_blocks_per_seq; the graph's shape fixes it), and
// bucket - S padding rows that write nothing (slot -1), read one key of block 0 and sample a
// row whose logits are dropped. Every bucket-sized plan so made has the same upload layout
// (plan_upload.h), which is what lets a captured graph read it. Throws std::invalid_argument
// for an ineligible plan, a bucket < S or a width < max_blocks_per_seq.
StepPlan pad_decode_plan(const StepPlan& plan, int32_t bucket, int32_t width);

// A bucket's plan made of padding rows only: what the executor runs once per bucket at start to
// warm up and capture its graph. It writes no K/V; its layout is every padded plan's.
StepPlan graph_warmup_plan(int32_t bucket, int32_t width);

}  // namespace ps
