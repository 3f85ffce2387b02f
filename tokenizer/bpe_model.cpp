#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <queue>
#include <shared_mutex>
#include <stdexcept>

#include "tokenizer/byte_level.h"
#include "tokenizer/json_steps.h"

namespace ps {
namespace {

using json_steps::fail;

// Words longer than this are rare (long CJK runs, base64); caching them only evicts useful ones.
constexpr size_t kMaxCachedWordBytes = 128;
constexpr size_t kMaxCacheEntries = 1 << 16;

}  // namespace

struct BpeModel::Cache {
  std::shared_mutex mutex;
  StringMap<std::vector<int32_t>> words;
};

BpeModel::BpeModel() : cache_(std::make_unique<Cache>()) {}
BpeModel::BpeModel(BpeModel&&) noexcept = default;
BpeModel& BpeModel::operator=(BpeModel&&) noexcept = default;
BpeModel::~BpeModel() = default;

BpeModel BpeModel::from_json(const nlohmann::json& model, const std::string& origin,
                             bool byte_level) {
  if (!model.is_object()) fail(origin, "\"model\" is missing or not an object");
  std::string type = model.contains("type") && model["type"].is_string()
                         ? model["type"].get<std::string>()
                         : std::string("BPE");  // old files leave the type out
  if (type != "BPE") {
    fail(origin,
         "model.type is \"" + type +
             "\", which is not supported: only BPE tokenizers are (byte-level like Qwen and "
             "Llama 3, or SentencePiece-style like Llama 2, Mistral and Gemma); Unigram "
             "and WordPiece models are not");
  }
  if (model.contains("dropout") && !model["dropout"].is_null() &&
      !(model["dropout"].is_number() && model["dropout"].get<double>() == 0.0)) {
    fail(origin, "model.dropout is set; BPE dropout (random merges) is not supported for serving");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(key) && !model[key].is_null() &&
        !(model[key].is_string() && model[key].get<std::string>().empty())) {
      fail(origin,
           std::string("model.") + key + " is set; BPE with subword affixes is not supported");
    }
  }

  BpeModel m;
  m.byte_level_ = byte_level;
  auto flag = [&](const char* key) {
    if (!model.contains(key) || model[key].is_null()) return false;
    if (!model[key].is_boolean())
      fail(origin, std::string("model.") + key + " must be true or false");
    return model[key].get<bool>();
  };
  m.ignore_merges_ = flag("ignore_merges");
  m.byte_fallback_ = flag("byte_fallback");
  m.fuse_unk_ = flag("fuse_unk");

  const auto& vocab = model.value("vocab", nlohmann::json());
  if (!vocab.is_object()) fail(origin, "model.vocab is missing or not an object");
  m.vocab_.reserve(vocab.size());
  for (const auto& [token, id_json] : vocab.items()) {
    if (!id_json.is_number_integer() || id_json.get<int64_t>() < 0 ||
        id_json.get<int64_t>() > INT32_MAX) {
      fail(origin, "model.vocab[\"" + token + "\"] must be a non-negative integer id");
    }
    int32_t id = id_json.get<int32_t>();
    m.vocab_.emplace(token, id);
    m.max_id_ = std::max(m.max_id_, id);
    if (m.ignore_merges_) m.raw_to_id_.emplace(byte_level ? byte_level_decode(token) : token, id);
  }

  if (byte_level) {
    const auto& chars = byte_level_chars();
    for (int b = 0; b < 256; ++b) {
      auto it = m.vocab_.find(chars[b]);
      if (it == m.vocab_.end()) {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "0x%02X", b);
        fail(origin, "model.vocab has no token for byte " + std::string(hex) + " (\"" + chars[b] +
                         "\"); a byte-level BPE vocab needs all 256");
      }
      m.byte_ids_[b] = it->second;
    }
  } else {
    for (int b = 0; b < 256; ++b) {
      char spelling[8];
      std::snprintf(spelling, sizeof(spelling), "<0x%02X>", b);
      auto it = m.vocab_.find(spelling);
      m.byte_ids_[b] = it == m.vocab_.end() ? -1 : it->second;
    }
    const auto& unk = model.value("unk_token", nlohmann::json());
    if (unk.is_string()) {
      auto it = m.vocab_.find(unk.get<std::string>());
      if (it == m.vocab_.end()) {
        fail(origin, "model.unk_token \"" + unk.get<std::string>() + "\" is not in model.vocab");
      }
      m.unk_id_ = it->second;
    } else if (!unk.is_null()) {
      fail(origin, "model.unk_token must be a string or null");
    }
  }

  const auto& merges = model.value("merges", nlohmann::json());
  if (!merges.is_array()) fail(origin, "model.merges is missing or not an array");
  m.merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& entry = merges[rank];
    std::string left, right;
    std::string where = "model.merges[" + std::to_string(rank) + "]";
    if (entry.is_string()) {
      // "a b": vocab tokens never hold a plain space (byte-level spells it "Ġ", SentencePiece
      // "▁"), so one split is unambiguous.
      const std::string& s = entry.get_ref<const std::string&>();
      size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        fail(origin, where + " \"" + s + "\" must be two tokens separated by one space");
      }
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() &&
               entry[1].is_string()) {
      left = entry[0].get<std::string>();
      right = entry[1].get<std::string>();
    } else {
      fail(origin, where + " must be \"a b\" or [\"a\", \"b\"]");
    }
    auto l = m.vocab_.find(left);
    auto r = m.vocab_.find(right);
    auto merged = m.vocab_.find(left + right);
    if (l == m.vocab_.end() || r == m.vocab_.end() || merged == m.vocab_.end()) {
      fail(origin, where + " (\"" + left + "\", \"" + right +
                       "\") uses a token that model.vocab does not have");
    }
    // A pair listed twice keeps its first (best) rank, as the reference library does.
    m.merges_.emplace(pair_key(l->second, r->second),
                      Merge{static_cast<int32_t>(rank), merged->second});
  }
  return m;
}

void BpeModel::encode_word(std::string_view raw, std::vector<int32_t>& out) const {
  if (raw.empty()) return;
  if (ignore_merges_) {
    // Llama 3: a pre-token that is a whole vocab entry maps straight to it.
    auto it = raw_to_id_.find(raw);
    if (it != raw_to_id_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  if (raw.size() == 1 && byte_level_) {
    out.push_back(byte_ids_[static_cast<unsigned char>(raw[0])]);
    return;
  }
  if (raw.size() > kMaxCachedWordBytes) {
    merge_word(raw, out);
    return;
  }
  {
    std::shared_lock lock(cache_->mutex);
    auto it = cache_->words.find(raw);
    if (it != cache_->words.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  size_t first = out.size();
  merge_word(raw, out);
  std::unique_lock lock(cache_->mutex);
  if (cache_->words.size() >= kMaxCacheEntries) cache_->words.clear();
  cache_->words.emplace(std::string(raw), std::vector<int32_t>(out.begin() + first, out.end()));
}

// Repeatedly merges the adjacent pair with the lowest rank, leftmost first on ties, using a heap
// of candidate pairs (stale entries are skipped when popped), so long words cost O(n log n).
void BpeModel::merge_word(std::string_view raw, std::vector<int32_t>& out) const {
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
  };
  struct Candidate {
    int32_t rank;
    int32_t pos;  // index of the left symbol
    int32_t left;
    int32_t right;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::vector<int32_t> start;
  if (byte_level_) {
    start.reserve(raw.size());
    for (unsigned char c : raw) start.push_back(byte_ids_[c]);
  } else {
    char_symbols(raw, start);
  }
  const int32_t n = static_cast<int32_t>(start.size());
  if (n == 0) return;  // only unknown characters and no unk token: the reference drops them
  std::vector<Symbol> symbols(n);
  for (int32_t i = 0; i < n; ++i) symbols[i] = {start[i], i - 1, i + 1 < n ? i + 1 : -1};
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto push_pair = [&](int32_t pos) {
    int32_t next = symbols[pos].next;
    if (next < 0) return;
    auto it = merges_.find(pair_key(symbols[pos].id, symbols[next].id));
    if (it != merges_.end()) heap.push({it->second.rank, pos, symbols[pos].id, symbols[next].id});
  };
  for (int32_t i = 0; i + 1 < n; ++i) push_pair(i);

  while (!heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    Symbol& left = symbols[c.pos];
    if (left.id != c.left || left.next < 0) continue;  // left was merged away or changed
    Symbol& right = symbols[left.next];
    if (right.id != c.right) continue;
    left.id = merges_.find(pair_key(c.left, c.right))->second.result;
    right.id = -1;  // dead
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = c.pos;
    if (left.prev >= 0) push_pair(left.prev);
    push_pair(c.pos);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

void BpeModel::char_symbols(std::string_view raw, std::vector<int32_t>& ids) const {
  bool last_was_unk = false;
  for (size_t pos = 0; pos < raw.size();) {
    size_t len = utf8_sequence_length(raw, pos);
    if (len == 0) len = 1;
    std::string_view ch = raw.substr(pos, len);
    pos += len;
    auto it = vocab_.find(std::string(ch));
    if (it != vocab_.end()) {
      ids.push_back(it->second);
      last_was_unk = false;
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (unsigned char b : ch) all = all && byte_ids_[b] >= 0;
      if (all) {
        for (unsigned char b : ch) ids.push_back(byte_ids_[b]);
        last_was_unk = false;
        continue;
      }
    }
    if (unk_id_ < 0) continue;  // no unk token: the character is dropped, as the reference does
    if (!(fuse_unk_ && last_was_unk)) ids.push_back(unk_id_);
    last_was_unk = true;
  }
}

}  // namespace ps
