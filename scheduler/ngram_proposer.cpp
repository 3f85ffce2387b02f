#include "scheduler/ngram_proposer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ps {

std::vector<int32_t> propose_ngram_draft(std::span<const int32_t> tokens,
                                         const NgramLookup& lookup) {
  if (lookup.ngram_min < 1 || lookup.ngram_min > lookup.ngram_max) {
    throw std::invalid_argument("n-gram lookup needs 1 <= ngram_min <= ngram_max, got " +
                                std::to_string(lookup.ngram_min) + " and " +
                                std::to_string(lookup.ngram_max));
  }
  const auto len = static_cast<int64_t>(tokens.size());
  if (lookup.max_draft <= 0) return {};
  for (int64_t n = std::min<int64_t>(lookup.ngram_max, len - 1); n >= lookup.ngram_min; --n) {
    const auto suffix = tokens.subspan(static_cast<size_t>(len - n));
    // Candidate starts, most recent first; the suffix itself (start len - n) is excluded, and
    // a match must leave at least one token after it to propose.
    for (int64_t start = len - n - 1; start >= 0; --start) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + start)) continue;
      const int64_t from = start + n;
      const int64_t count = std::min<int64_t>(lookup.max_draft, len - from);
      return std::vector<int32_t>(tokens.begin() + from, tokens.begin() + from + count);
    }
  }
  return {};
}

}  // namespace ps
