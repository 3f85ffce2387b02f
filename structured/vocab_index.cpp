#include "structured/vocab_index.h"

#include <algorithm>

#include "structured/constraint_spec.h"

namespace ps {

VocabIndex::VocabIndex(std::shared_ptr<const std::vector<std::string>> token_bytes,
                       std::vector<int32_t> eos_ids, std::vector<int32_t> special_ids)
    : bytes_(std::move(token_bytes)),
      eos_ids_(std::move(eos_ids)),
      special_ids_(std::move(special_ids)) {
  if (!bytes_) throw std::invalid_argument("VocabIndex: no token table");
  const auto& tb = *bytes_;
  flags_.assign(tb.size(), 0);
  for (int32_t id : eos_ids_) {
    if (id < 0 || static_cast<size_t>(id) >= tb.size()) {
      throw std::invalid_argument("VocabIndex: EOS id " + std::to_string(id) + " out of range");
    }
    flags_[id] |= kEos;
  }
  for (int32_t id : special_ids_) {
    if (id < 0 || static_cast<size_t>(id) >= tb.size()) {
      throw std::invalid_argument("VocabIndex: special id " + std::to_string(id) + " out of range");
    }
    flags_[id] |= kSpecial;
  }
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < static_cast<int32_t>(tb.size()); ++id) {
    if (!tb[id].empty() && !(flags_[id] & kEos)) ids.push_back(id);
  }
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return tb[a] < tb[b]; });

  // Preorder construction: `path` holds the node of each depth of the previous token.
  byte_.push_back(0);
  depth_.push_back(0);
  subtree_end_.push_back(0);
  token_begin_.push_back(0);
  std::vector<uint32_t> path{0};
  const std::string* prev = nullptr;
  auto close_to = [&](size_t depth) {
    while (path.size() > depth + 1) {
      subtree_end_[path.back()] = static_cast<uint32_t>(byte_.size());
      path.pop_back();
    }
  };
  for (int32_t id : ids) {
    const std::string& s = tb[id];
    max_len_ = std::max<uint32_t>(max_len_, static_cast<uint32_t>(s.size()));
    size_t lcp = 0;
    if (prev) {
      while (lcp < s.size() && lcp < prev->size() && s[lcp] == (*prev)[lcp]) ++lcp;
    }
    close_to(lcp);
    for (size_t d = lcp; d < s.size(); ++d) {
      byte_.push_back(static_cast<uint8_t>(s[d]));
      depth_.push_back(static_cast<uint32_t>(d + 1));
      subtree_end_.push_back(0);
      token_begin_.push_back(static_cast<uint32_t>(tokens_.size()));
      path.push_back(static_cast<uint32_t>(byte_.size() - 1));
    }
    tokens_.push_back(id);  // ends at path.back(); token_begin_ of the next node closes the range
    prev = &s;
  }
  close_to(0);
  subtree_end_[0] = static_cast<uint32_t>(byte_.size());
  token_begin_.push_back(static_cast<uint32_t>(tokens_.size()));
}

}  // namespace ps
