#pragma once
// The requests a benchmark sends: token-id prompts and how many tokens each must generate.
// Both `bench offline` and `bench serve` run the same Workload, so their throughputs compare.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ps {

struct Workload {
  std::vector<std::vector<int32_t>> prompts;
  std::vector<int32_t> output_lens;
  size_t size() const { return prompts.size(); }
  int64_t prompt_tokens() const;
  int64_t output_tokens() const;
};

// Random token prompts, seeded. Lengths are drawn uniformly from
// [len * (1 - range_ratio), len * (1 + range_ratio)] (at least 1); range_ratio 0 gives exact
// lengths. Ids below 3 are the tiny model's special tokens, so prompts stay ordinary text.
Workload random_workload(int32_t num_prompts, int32_t input_len, int32_t output_len,
                         int32_t vocab_size, uint64_t seed, double range_ratio = 0.0);

// `num_prompts` prompts that all start with the same `prefix_len` random tokens (a long system
// prompt) followed by `suffix_len` tokens of their own. With shared_prefix false every prompt
// gets its own prefix instead: the same shapes, but nothing for a prefix cache to reuse.
Workload prefix_workload(int32_t num_prompts, int32_t prefix_len, int32_t suffix_len,
                         int32_t output_len, int32_t vocab_size, uint64_t seed, bool shared_prefix);

// Text -> token ids (the local tokenizer, or the server's /tokenize).
using TokenizeFn = std::function<std::vector<int32_t>(const std::string&)>;

// A JSONL file, one request per line, in either form:
//   {"prompt": "text" | [ids], "output_len": N}      (output_len optional)
//   {"conversations": [{"from": "human", "value": "..."}, {"from": "gpt", "value": "..."}]}
// (ShareGPT: the first human turn is the prompt; the reply's token count is the output length).
// Lines without an output length use `default_output_len`. Reads at most `limit` requests
// (0: all). Throws std::runtime_error naming the file and line on malformed input.
Workload load_dataset(const std::string& path, const TokenizeFn& tokenize,
                      int32_t default_output_len, size_t limit);

}  // namespace ps
