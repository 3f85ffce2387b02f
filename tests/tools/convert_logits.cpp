// Test tool for tests/e2e/convert_pytorch.sh: loads a checkpoint (optionally merging a LoRA
// adapter, exactly as `serve --lora` does) and compares its logits with the ones a PyTorch
// reference wrote: PREFIX.f32 (raw little-endian float32 [T, V]) and PREFIX.json
// ({"tokens": [...], "shape": [T, V], "tol": max abs difference}). Both the naive oracle and the
// batched paged runner (prefill of the first half, then one decode step per token: the rows it
// samples) are checked; for a model with linear-attention layers also prefill in chunks of 1,
// 7, 64 and all tokens, each carrying the recurrent state to the next.
// Exit 0 when both are within tol, 1 otherwise; prints the largest differences.
//
// usage: convert_logits MODEL_DIR PREFIX [ADAPTER]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/loader.h"
#include "convert/lora_merge.h"
#include "cpu/model_runner.h"
#include "model/model_weights.h"
#include "reference/naive_forward.h"

namespace {

// Logits through the paged runner: a prefill step over the first `split` tokens (sampling its
// last row), then steps of `chunk` tokens each sampling their last row (chunk 1: decode).
// A hybrid model's recurrent state rides in state slot 0 from step to step.
std::vector<float> runner_logits(const ps::LoadedModel& m, const std::vector<int32_t>& tokens,
                                 int32_t split, int32_t chunk) {
  constexpr int32_t kBlock = 4;
  const auto n = static_cast<int32_t>(tokens.size());
  const int32_t blocks = (n + kBlock - 1) / kBlock;
  const bool hybrid = m.config.num_linear_layers() > 0;
  ps::ModelRunner runner(m.weights, ps::KvCacheSpec{blocks + 1, kBlock, 0, hybrid ? 1 : 0});
  const int64_t vocab = m.config.vocab_size;
  std::vector<float> all(static_cast<size_t>(n * vocab), NAN);
  auto step = [&](int32_t begin, int32_t end) {
    ps::StepPlan p;
    p.seq_ids = {0};
    if (hybrid) p.state_slots = {0};
    for (int32_t i = begin; i < end; ++i) {
      p.token_ids.push_back(tokens[static_cast<size_t>(i)]);
      p.positions.push_back(i);
      p.slot_mapping.push_back(i);  // block b holds positions [b*kBlock, (b+1)*kBlock)
    }
    p.query_start = {0, end - begin};
    p.context_len = {end};
    p.max_blocks_per_seq = blocks;
    for (int32_t b = 0; b < blocks; ++b) p.block_tables.push_back(b);
    p.sample_indices = {0};
    (begin == 0 ? p.num_prefill_tokens : p.num_decode_tokens) = end - begin;
    std::vector<float> logits;
    runner.forward(p, &logits);
    std::copy(logits.begin(), logits.end(), all.begin() + (end - 1) * vocab);
  };
  if (split > 0) step(0, split);
  for (int32_t i = split; i < n; i += chunk) step(i, std::min(n, i + chunk));
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: convert_logits MODEL_DIR PREFIX [ADAPTER]\n");
    return 2;
  }
  try {
    const std::string prefix = argv[2];
    std::ifstream meta_in(prefix + ".json");
    const nlohmann::json meta = nlohmann::json::parse(meta_in);
    const auto tokens = meta.at("tokens").get<std::vector<int32_t>>();
    const auto shape = meta.at("shape").get<std::vector<int64_t>>();
    const double tol = meta.at("tol").get<double>();
    std::ifstream raw(prefix + ".f32", std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(raw)), {});
    std::vector<float> expected(bytes.size() / 4);
    std::memcpy(expected.data(), bytes.data(), expected.size() * 4);

    ps::LoadedModel m = ps::load_model(argv[1]);
    if (argc == 4) m = ps::merge_lora(m, argv[3]);
    if (shape.size() != 2 || shape[0] != static_cast<int64_t>(tokens.size()) ||
        shape[1] != m.config.vocab_size ||
        expected.size() != static_cast<size_t>(shape[0] * shape[1])) {
      std::fprintf(stderr, "%s: shape does not match the model (vocab %d)\n", prefix.c_str(),
                   m.config.vocab_size);
      return 1;
    }
    int bad = 0;
    size_t min_rows = tokens.size() / 2;
    // Rows left NaN were not sampled (the runner's prefill yields only its last row).
    auto compare = [&](const char* what, const std::vector<float>& got) {
      double worst = 0;
      size_t rows = 0;
      const auto vocab = static_cast<size_t>(shape[1]);
      for (size_t row = 0; row * vocab < expected.size(); ++row) {
        if (std::isnan(got[row * vocab])) continue;
        ++rows;
        for (size_t i = row * vocab; i < (row + 1) * vocab; ++i) {
          const double d = std::fabs(double{got[i]} - expected[i]);
          worst = std::isnan(d) ? INFINITY : std::max(worst, d);
        }
      }
      std::printf("%s %s: %zu rows, max |diff| %.3g (tol %.3g)\n", prefix.c_str(), what, rows,
                  worst, tol);
      if (rows < min_rows || !(worst <= tol)) ++bad;
    };
    compare("naive", ps::naive_logits(*m.weights, tokens));
    const auto n = static_cast<int32_t>(tokens.size());
    compare("runner", runner_logits(m, tokens, n / 2, 1));
    if (m.config.num_linear_layers() > 0) {
      for (int32_t chunk : {1, 7, 64, n}) {
        min_rows = static_cast<size_t>((n + chunk - 1) / chunk);
        const std::string what = "runner chunks of " + std::to_string(chunk);
        compare(what.c_str(), runner_logits(m, tokens, 0, chunk));
      }
    }
    return bad ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "convert_logits: %s\n", e.what());
    return 1;
  }
}
