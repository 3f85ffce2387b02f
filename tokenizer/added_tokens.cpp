#include "tokenizer/added_tokens.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tokenizer/byte_level.h"
#include "tokenizer/json_steps.h"
#include "tokenizer/normalizer.h"

namespace ps {
namespace {

using json_steps::fail;

bool flag(const nlohmann::json& j, const char* key, const std::string& origin,
          const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return false;
  if (!j[key].is_boolean()) fail(origin, where + "." + key + " must be true or false");
  return j[key].get<bool>();
}

// Byte length of the White_Space characters at the start of `s`.
size_t leading_space(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t len = utf8_sequence_length(s, pos);
    if (len == 0 || !is_unicode_white_space(utf8_decode_at(s, pos, len))) break;
    pos += len;
  }
  return pos;
}

// Byte length of the White_Space characters at the end of `s`.
size_t trailing_space(std::string_view s) {
  size_t content_end = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t len = utf8_sequence_length(s, pos);
    bool space = len > 0 && is_unicode_white_space(utf8_decode_at(s, pos, len));
    pos += len > 0 ? len : 1;
    if (!space) content_end = pos;
  }
  return s.size() - content_end;
}

}  // namespace

AddedTokens AddedTokens::from_json(const nlohmann::json& added_tokens, const std::string& origin) {
  AddedTokens result;
  if (added_tokens.is_null()) return result;
  if (!added_tokens.is_array()) fail(origin, "added_tokens must be an array");
  for (size_t i = 0; i < added_tokens.size(); ++i) {
    const auto& j = added_tokens[i];
    std::string where = "added_tokens[" + std::to_string(i) + "]";
    if (!j.is_object() || !j.contains("id") || !j["id"].is_number_integer() ||
        j["id"].get<int64_t>() < 0 || j["id"].get<int64_t>() > INT32_MAX) {
      fail(origin, where + " needs a non-negative integer \"id\"");
    }
    if (!j.contains("content") || !j["content"].is_string() ||
        j["content"].get<std::string>().empty()) {
      fail(origin, where + " needs a non-empty string \"content\"");
    }
    AddedToken token;
    token.id = j["id"].get<int32_t>();
    token.content = j["content"].get<std::string>();
    token.special = flag(j, "special", origin, where);
    token.lstrip = flag(j, "lstrip", origin, where);
    token.rstrip = flag(j, "rstrip", origin, where);
    // The reference's default: special tokens match the raw text, others the normalized one.
    token.normalized = j.contains("normalized") && !j["normalized"].is_null()
                           ? flag(j, "normalized", origin, where)
                           : !token.special;
    if (flag(j, "single_word", origin, where)) {
      fail(origin, where + " (\"" + token.content +
                       "\") has single_word true, which is not supported (set it to false)");
    }
    result.tokens_.push_back(std::move(token));
  }
  Normalizer none;
  result.prepare(none, false);
  return result;
}

void AddedTokens::prepare(const Normalizer& normalizer, bool split_special_tokens) {
  for (auto* buckets : {&raw_, &normalized_}) {
    for (auto& bucket : *buckets) bucket.clear();
  }
  for (uint32_t i = 0; i < tokens_.size(); ++i) {
    const AddedToken& t = tokens_[i];
    if (split_special_tokens && t.special) continue;
    std::string text =
        t.normalized && !normalizer.empty() ? normalizer.apply(t.content) : t.content;
    if (text.empty()) continue;
    Buckets& buckets = t.normalized ? normalized_ : raw_;
    buckets[static_cast<unsigned char>(text[0])].push_back({std::move(text), i});
  }
  for (auto* buckets : {&raw_, &normalized_}) {
    for (auto& bucket : *buckets) {
      std::stable_sort(bucket.begin(), bucket.end(), [](const Pattern& a, const Pattern& b) {
        return a.text.size() > b.text.size();
      });
    }
  }
}

std::vector<AddedTokens::Segment> AddedTokens::split(std::string_view text, Pass pass) const {
  const Buckets& buckets = pass == Pass::kRaw ? raw_ : normalized_;
  std::vector<Segment> segments;
  size_t plain_begin = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const AddedToken* match = nullptr;
    size_t match_size = 0;
    for (const Pattern& p : buckets[static_cast<unsigned char>(text[pos])]) {
      if (text.compare(pos, p.text.size(), p.text) == 0) {
        match = &tokens_[p.token];
        match_size = p.text.size();
        break;
      }
    }
    if (match == nullptr) {
      ++pos;
      continue;
    }
    std::string_view plain = text.substr(plain_begin, pos - plain_begin);
    if (match->lstrip) plain.remove_suffix(trailing_space(plain));
    if (!plain.empty()) segments.push_back({plain, nullptr});
    segments.push_back({text.substr(pos, match_size), match});
    pos += match_size;
    if (match->rstrip) pos += leading_space(text.substr(pos));
    plain_begin = pos;
  }
  if (plain_begin < text.size()) segments.push_back({text.substr(plain_begin), nullptr});
  return segments;
}

}  // namespace ps
