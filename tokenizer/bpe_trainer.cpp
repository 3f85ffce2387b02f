#include "tokenizer/bpe_trainer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"

namespace ps {
namespace {

// Qwen2's pre-tokenizer pattern: contractions, letter runs (with one leading non-letter), single
// digits, punctuation runs, newline runs, and whitespace that stays off the next word.
constexpr const char* kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

nlohmann::ordered_json byte_level_section() {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", false},
          {"trim_offsets", false},
          {"use_regex", false}};
}

nlohmann::ordered_json qwen2_pre_tokenizer() {
  nlohmann::ordered_json split = {{"type", "Split"},
                                  {"pattern", {{"Regex", kQwen2Pattern}}},
                                  {"behavior", "Isolated"},
                                  {"invert", false}};
  return {{"type", "Sequence"},
          {"pretokenizers", nlohmann::ordered_json::array({split, byte_level_section()})}};
}

using Pair = uint64_t;
Pair make_pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}
int32_t left_of(Pair p) {
  return static_cast<int32_t>(p >> 32);
}
int32_t right_of(Pair p) {
  return static_cast<int32_t>(p & 0xFFFFFFFFu);
}

struct Word {
  std::vector<int32_t> symbols;
  int64_t count;
};

// Most frequent first; among equal counts the smaller (left id, right id), so the result never
// depends on hash-map order.
struct HeapEntry {
  int64_t count;
  Pair pair;
  bool operator<(const HeapEntry& o) const {
    if (count != o.count) return count < o.count;
    return pair > o.pair;
  }
};

// Learns merges over unique words with pair counts kept up to date per merge: only the words
// that hold the merged pair are touched, never a full recount.
class Trainer {
 public:
  explicit Trainer(std::vector<Word> words) : words_(std::move(words)), visited_(words_.size(), 0) {
    for (int32_t w = 0; w < static_cast<int32_t>(words_.size()); ++w) {
      const auto& s = words_[w].symbols;
      for (size_t i = 0; i + 1 < s.size(); ++i) {
        Pair p = make_pair_key(s[i], s[i + 1]);
        counts_[p] += words_[w].count;
        where_[p].push_back(w);
      }
    }
    for (const auto& [pair, count] : counts_) heap_.push({count, pair});
  }

  // Returns the best pair with at least `min_count` occurrences, or nullopt.
  std::optional<std::pair<Pair, int64_t>> best(int64_t min_count) {
    while (!heap_.empty()) {
      HeapEntry top = heap_.top();
      heap_.pop();
      auto it = counts_.find(top.pair);
      int64_t actual = it == counts_.end() ? 0 : it->second;
      if (actual != top.count) {
        // Stale. A pair that grew was pushed again when it grew; one that shrank goes back in.
        if (actual > 0 && actual < top.count) heap_.push({actual, top.pair});
        continue;
      }
      if (actual < min_count) return std::nullopt;
      return std::make_pair(top.pair, actual);
    }
    return std::nullopt;
  }

  // Replaces every occurrence of `pair` by `merged` and updates the counts of the pairs around.
  void apply(Pair pair, int32_t merged) {
    int32_t a = left_of(pair), b = right_of(pair);
    ++stamp_;
    std::vector<int32_t> affected = std::move(where_[pair]);
    where_.erase(pair);
    std::vector<std::pair<Pair, int64_t>> deltas;
    std::vector<int32_t> next;
    std::vector<Pair> grown;
    for (int32_t w : affected) {
      if (visited_[w] == stamp_) continue;
      visited_[w] = stamp_;
      Word& word = words_[w];
      const auto& s = word.symbols;
      next.clear();
      bool changed = false;
      for (size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          next.push_back(merged);
          ++i;
          changed = true;
        } else {
          next.push_back(s[i]);
        }
      }
      if (!changed) continue;  // stale entry: an earlier merge already consumed the pair here
      deltas.clear();
      for (size_t i = 0; i + 1 < s.size(); ++i) {
        deltas.emplace_back(make_pair_key(s[i], s[i + 1]), -word.count);
      }
      for (size_t i = 0; i + 1 < next.size(); ++i) {
        deltas.emplace_back(make_pair_key(next[i], next[i + 1]), word.count);
      }
      std::sort(deltas.begin(), deltas.end());
      for (size_t i = 0; i < deltas.size();) {
        Pair p = deltas[i].first;
        int64_t sum = 0;
        bool added = false;
        for (; i < deltas.size() && deltas[i].first == p; ++i) {
          sum += deltas[i].second;
          added |= deltas[i].second > 0;
        }
        if (added && p != pair) where_[p].push_back(w);
        if (sum == 0) continue;
        int64_t& c = counts_[p];
        c += sum;
        if (sum > 0) grown.push_back(p);
        if (c == 0) counts_.erase(p);
      }
      word.symbols.swap(next);
    }
    counts_.erase(pair);
    std::sort(grown.begin(), grown.end());
    grown.erase(std::unique(grown.begin(), grown.end()), grown.end());
    for (Pair p : grown) {
      auto it = counts_.find(p);
      if (it != counts_.end()) heap_.push({it->second, p});
    }
  }

 private:
  std::vector<Word> words_;
  std::vector<uint32_t> visited_;
  uint32_t stamp_ = 0;
  std::unordered_map<Pair, int64_t> counts_;
  std::unordered_map<Pair, std::vector<int32_t>> where_;
  std::priority_queue<HeapEntry> heap_;
};

}  // namespace

std::string train_byte_level_bpe(const std::string& corpus, const BpeTrainOptions& options) {
  // Special tokens first, then the non-special added tokens: both are written as added_tokens
  // and keep their literal text in the vocab.
  std::vector<std::string> fixed = options.special_tokens;
  fixed.insert(fixed.end(), options.added_tokens.begin(), options.added_tokens.end());
  const int32_t specials = static_cast<int32_t>(fixed.size());
  if (options.vocab_size < specials + 256) {
    throw std::runtime_error("BpeTrainOptions.vocab_size " + std::to_string(options.vocab_size) +
                             " is below special/added tokens + 256 byte tokens (" +
                             std::to_string(specials + 256) + "); raise it");
  }
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
  for (int32_t i = 0; i < specials; ++i) {
    const bool special = i < static_cast<int32_t>(options.special_tokens.size());
    if (fixed[i].empty()) {
      throw std::runtime_error(
          std::string(special ? "BpeTrainOptions.special_tokens["
                              : "BpeTrainOptions.added_tokens[") +
          std::to_string(special ? i : i - static_cast<int32_t>(options.special_tokens.size())) +
          "] is empty; give every added token some text");
    }
    added.push_back({{"id", i},
                     {"content", fixed[i]},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", special}});
  }

  // Token strings by id: specials, then the 256 bytes in the order of their vocab spelling
  // (which is GPT-2's byte-to-unicode order), then one per new merged string.
  std::vector<std::string> raw_of;  // raw bytes per id
  StringMap<int32_t> id_of_raw;
  for (const std::string& s : fixed) raw_of.push_back(s);
  std::vector<int> byte_order(256);
  for (int b = 0; b < 256; ++b) byte_order[b] = b;
  const auto& chars = byte_level_chars();
  std::sort(byte_order.begin(), byte_order.end(), [&](int x, int y) {
    return utf8_decode_at(chars[x], 0, chars[x].size()) <
           utf8_decode_at(chars[y], 0, chars[y].size());
  });
  int32_t byte_id[256];
  for (int b : byte_order) {
    byte_id[b] = static_cast<int32_t>(raw_of.size());
    id_of_raw.emplace(std::string(1, static_cast<char>(b)), byte_id[b]);
    raw_of.push_back(std::string(1, static_cast<char>(b)));
  }

  // Count the corpus's pre-tokens exactly as the written tokenizer will cut them.
  const std::string origin = "train_byte_level_bpe";
  PreTokenizer pre =
      PreTokenizer::from_json(nlohmann::json::parse(qwen2_pre_tokenizer().dump()), origin);
  AddedTokens added_tokens = AddedTokens::from_json(nlohmann::json::parse(added.dump()), origin);
  StringMap<int64_t> word_counts;
  std::vector<Regex::Span> pieces;
  for (const auto& segment : added_tokens.split(corpus)) {
    if (segment.token != nullptr) continue;
    pieces.clear();
    pre.split(segment.text, pieces);
    for (const Regex::Span& p : pieces) {
      std::string_view w = segment.text.substr(p.begin, p.end - p.begin);
      auto it = word_counts.find(w);
      if (it == word_counts.end()) {
        word_counts.emplace(std::string(w), 1);
      } else {
        ++it->second;
      }
    }
  }
  std::vector<std::pair<std::string, int64_t>> sorted_words(word_counts.begin(), word_counts.end());
  std::sort(sorted_words.begin(), sorted_words.end());
  std::vector<Word> words;
  words.reserve(sorted_words.size());
  for (const auto& [text, count] : sorted_words) {
    Word w{{}, count};
    for (unsigned char c : text) w.symbols.push_back(byte_id[c]);
    words.push_back(std::move(w));
  }

  Trainer trainer(std::move(words));
  nlohmann::ordered_json merges = nlohmann::ordered_json::array();
  const int64_t min_count = std::max<int64_t>(1, options.min_pair_frequency);
  while (static_cast<int32_t>(raw_of.size()) < options.vocab_size) {
    auto best = trainer.best(min_count);
    if (!best) break;
    Pair pair = best->first;
    std::string raw = raw_of[left_of(pair)] + raw_of[right_of(pair)];
    auto [it, is_new] = id_of_raw.emplace(raw, static_cast<int32_t>(raw_of.size()));
    if (is_new) raw_of.push_back(raw);
    merges.push_back(byte_level_encode(raw_of[left_of(pair)]) + " " +
                     byte_level_encode(raw_of[right_of(pair)]));
    trainer.apply(pair, it->second);
  }

  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (int32_t id = 0; id < static_cast<int32_t>(raw_of.size()); ++id) {
    vocab[id < specials ? raw_of[id] : byte_level_encode(raw_of[id])] = id;
  }
  nlohmann::ordered_json model = {{"type", "BPE"},
                                  {"dropout", nullptr},
                                  {"unk_token", nullptr},
                                  {"continuing_subword_prefix", ""},
                                  {"end_of_word_suffix", ""},
                                  {"fuse_unk", false},
                                  {"byte_fallback", false},
                                  {"ignore_merges", false},
                                  {"vocab", std::move(vocab)},
                                  {"merges", std::move(merges)}};
  nlohmann::ordered_json out = {{"version", "1.0"},
                                {"truncation", nullptr},
                                {"padding", nullptr},
                                {"added_tokens", std::move(added)},
                                {"normalizer", nullptr},
                                {"pre_tokenizer", qwen2_pre_tokenizer()},
                                {"post_processor", byte_level_section()},
                                {"decoder", byte_level_section()},
                                {"model", std::move(model)}};
  return out.dump(2);
}

}  // namespace ps
