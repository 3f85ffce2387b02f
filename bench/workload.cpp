#include "bench/workload.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

namespace ps {
namespace {

using json = nlohmann::json;

std::vector<int32_t> random_ids(std::mt19937_64& rng, int32_t n, int32_t vocab_size) {
  std::uniform_int_distribution<int32_t> id(3, std::max(3, vocab_size - 1));
  std::vector<int32_t> p(static_cast<size_t>(std::max(0, n)));
  for (auto& t : p) t = id(rng);
  return p;
}

int32_t draw_len(std::mt19937_64& rng, int32_t len, double ratio) {
  if (ratio <= 0) return len;
  const auto lo = static_cast<int32_t>(std::floor(len * (1 - ratio)));
  const auto hi = static_cast<int32_t>(std::ceil(len * (1 + ratio)));
  return std::max(1, std::uniform_int_distribution<int32_t>(std::max(1, lo), hi)(rng));
}

[[noreturn]] void bad_line(const std::string& path, size_t line, const std::string& why) {
  throw std::runtime_error("--dataset " + path + " line " + std::to_string(line) + ": " + why +
                           " (expected {\"prompt\": ..., \"output_len\": N} or ShareGPT "
                           "{\"conversations\": [...]})");
}

}  // namespace

int64_t Workload::prompt_tokens() const {
  int64_t n = 0;
  for (const auto& p : prompts) n += static_cast<int64_t>(p.size());
  return n;
}

int64_t Workload::output_tokens() const {
  int64_t n = 0;
  for (int32_t l : output_lens) n += l;
  return n;
}

Workload random_workload(int32_t num_prompts, int32_t input_len, int32_t output_len,
                         int32_t vocab_size, uint64_t seed, double range_ratio) {
  std::mt19937_64 rng(seed);
  Workload w;
  for (int32_t i = 0; i < num_prompts; ++i) {
    const int32_t in = draw_len(rng, input_len, range_ratio);
    const int32_t out = draw_len(rng, output_len, range_ratio);
    w.prompts.push_back(random_ids(rng, in, vocab_size));
    w.output_lens.push_back(out);
  }
  return w;
}

Workload prefix_workload(int32_t num_prompts, int32_t prefix_len, int32_t suffix_len,
                         int32_t output_len, int32_t vocab_size, uint64_t seed,
                         bool shared_prefix) {
  std::mt19937_64 rng(seed);
  const std::vector<int32_t> shared = random_ids(rng, prefix_len, vocab_size);
  Workload w;
  for (int32_t i = 0; i < num_prompts; ++i) {
    std::vector<int32_t> p = shared_prefix ? shared : random_ids(rng, prefix_len, vocab_size);
    std::vector<int32_t> s = random_ids(rng, suffix_len, vocab_size);
    p.insert(p.end(), s.begin(), s.end());
    w.prompts.push_back(std::move(p));
    w.output_lens.push_back(output_len);
  }
  return w;
}

Workload load_dataset(const std::string& path, const TokenizeFn& tokenize,
                      int32_t default_output_len, size_t limit) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("--dataset " + path + ": cannot open the file");
  Workload w;
  std::string text;
  size_t line = 0;
  while ((limit == 0 || w.size() < limit) && std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) bad_line(path, line, "not a JSON object");
    std::vector<int32_t> ids;
    int32_t out_len = default_output_len;
    if (auto p = j.find("prompt"); p != j.end()) {
      if (p->is_string()) {
        ids = tokenize(p->get<std::string>());
      } else if (p->is_array() && std::all_of(p->begin(), p->end(), [](const json& x) {
                   return x.is_number_integer();
                 })) {
        ids = p->get<std::vector<int32_t>>();
      } else {
        bad_line(path, line, "'prompt' must be a string or an array of token ids");
      }
      if (auto o = j.find("output_len"); o != j.end()) {
        if (!o->is_number_integer() || o->get<int64_t>() < 1) {
          bad_line(path, line, "'output_len' must be a positive integer");
        }
        out_len = o->get<int32_t>();
      }
    } else if (auto c = j.find("conversations"); c != j.end() && c->is_array()) {
      // The first human turn and the reply that follows it.
      size_t k = 0;
      while (k < c->size() && (*c)[k].value("from", "") != "human") ++k;
      if (k == c->size()) bad_line(path, line, "no turn with \"from\": \"human\"");
      ids = tokenize((*c)[k].value("value", ""));
      if (k + 1 < c->size()) {
        const auto reply = tokenize((*c)[k + 1].value("value", ""));
        if (!reply.empty()) out_len = static_cast<int32_t>(reply.size());
      }
    } else {
      bad_line(path, line, "neither 'prompt' nor 'conversations'");
    }
    if (ids.empty()) continue;  // an empty prompt cannot be served; skip it, as ShareGPT has some
    w.prompts.push_back(std::move(ids));
    w.output_lens.push_back(out_len);
  }
  if (w.size() == 0) throw std::runtime_error("--dataset " + path + ": no usable requests");
  return w;
}

}  // namespace ps
