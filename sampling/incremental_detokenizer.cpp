#include "sampling/incremental_detokenizer.h"

#include "sampling/utf8.h"

namespace ps {

IncrementalDetokenizer::IncrementalDetokenizer(
    std::shared_ptr<const std::vector<std::string>> token_bytes,
    std::shared_ptr<const std::vector<bool>> is_special, bool skip_special_tokens)
    : token_bytes_(std::move(token_bytes)),
      is_special_(std::move(is_special)),
      skip_special_tokens_(skip_special_tokens) {}

std::string IncrementalDetokenizer::append(int32_t token) {
  if (token_bytes_ == nullptr || token < 0 || static_cast<size_t>(token) >= token_bytes_->size()) {
    return {};
  }
  const bool special = is_special_ != nullptr && static_cast<size_t>(token) < is_special_->size() &&
                       (*is_special_)[token];
  if (special && skip_special_tokens_) return {};
  pending_ += (*token_bytes_)[token];
  return drain(false);
}

std::string IncrementalDetokenizer::flush() {
  return drain(true);
}

std::string IncrementalDetokenizer::drain(bool at_end) {
  std::string out;
  size_t i = 0;
  while (i < pending_.size()) {
    const Utf8Unit u = next_utf8_unit(pending_, i);
    if (u.status == Utf8Status::kTruncated && !at_end) break;  // may still complete
    if (u.status == Utf8Status::kValid) {
      out.append(pending_, i, u.length);
    } else {
      out += kReplacementChar;
    }
    i += u.length;
  }
  pending_.erase(0, i);
  return out;
}

}  // namespace ps
