#include "sampling/stop_checker.h"

#include <algorithm>

namespace ps {
namespace {

bool contains(const std::vector<int32_t>& ids, int32_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Moves a cut back to the start of a UTF-8 character so emitted text never ends mid-character.
size_t char_boundary_at_or_before(const std::string& s, size_t cut) {
  while (cut > 0 && cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

}  // namespace

StopChecker::StopChecker(const SamplingParams& p, std::vector<int32_t> eos_ids, int32_t prompt_len,
                         int32_t max_model_len,
                         std::shared_ptr<const std::vector<std::string>> token_bytes,
                         std::shared_ptr<const std::vector<bool>> is_special)
    : eos_ids_(p.ignore_eos ? std::vector<int32_t>{} : std::move(eos_ids)),
      stop_token_ids_(p.stop_token_ids),
      max_tokens_(p.max_tokens),
      min_tokens_(p.min_tokens),
      prompt_len_(prompt_len),
      max_model_len_(max_model_len),
      detok_(std::move(token_bytes), std::move(is_special), p.skip_special_tokens),
      matcher_(p.stop) {
  suppressed_ = eos_ids_;
  for (int32_t id : stop_token_ids_) {
    if (!contains(suppressed_, id)) suppressed_.push_back(id);
  }
}

const std::vector<int32_t>& StopChecker::suppressed_ids() const {
  static const std::vector<int32_t> kEmpty;
  return num_output_ < min_tokens_ ? suppressed_ : kEmpty;
}

StopResult StopChecker::append(int32_t token) {
  if (reason_ != StopReason::kNone) return StopResult{{}, reason_, {}};
  ++num_output_;
  const bool may_stop = num_output_ >= min_tokens_;
  if (may_stop && contains(eos_ids_, token)) return finish(StopReason::kEos, take_all_text());
  if (may_stop && contains(stop_token_ids_, token)) {
    return finish(StopReason::kStopToken, take_all_text());
  }

  const std::string piece = detok_.append(token);
  const size_t before = held_.size();
  held_ += piece;
  if (auto m = matcher_.feed(piece, may_stop)) {
    const std::string& stop = matcher_.stop(m->stop_index);
    // The matcher's state never reaches past held_, so the match starts inside it.
    const size_t start = before + m->end - stop.size();
    return finish(StopReason::kStopString, held_.substr(0, start), stop);
  }
  if (num_output_ >= max_tokens_) return finish(StopReason::kMaxTokens, take_all_text());
  if (prompt_len_ + num_output_ >= max_model_len_) {
    return finish(StopReason::kContextLength, take_all_text());
  }

  const size_t keep = std::min(matcher_.partial_length(), held_.size());
  const size_t cut = char_boundary_at_or_before(held_, held_.size() - keep);
  StopResult r;
  r.text = held_.substr(0, cut);
  held_.erase(0, cut);
  return r;
}

StopResult StopChecker::finish_by_grammar() {
  if (reason_ != StopReason::kNone) return StopResult{{}, reason_, {}};
  return finish(StopReason::kGrammar, take_all_text());
}

StopResult StopChecker::finish_by_deadline() {
  if (reason_ != StopReason::kNone) return StopResult{{}, reason_, {}};
  return finish(StopReason::kDeadline, take_all_text());
}

std::string StopChecker::take_all_text() {
  std::string text = std::move(held_) + detok_.flush();
  held_.clear();
  return text;
}

StopResult StopChecker::finish(StopReason reason, std::string text, std::string matched) {
  reason_ = reason;
  return StopResult{std::move(text), reason, std::move(matched)};
}

}  // namespace ps
