#include "structured/char_set.h"

#include <algorithm>

#include "structured/gbnf_text.h"

namespace ps {

CharSet CharSet::range(uint32_t lo, uint32_t hi) {
  CharSet s;
  s.add(lo, hi);
  return s;
}

CharSet CharSet::all() {
  CharSet s;
  s.add(0, 0xD7FF);
  s.add(0xE000, kMaxCodePoint);
  return s;
}

void CharSet::add(uint32_t lo, uint32_t hi) {
  if (lo > hi) return;
  ranges_.emplace_back(lo, std::min(hi, kMaxCodePoint));
  normalize();
}

void CharSet::add(const CharSet& other) {
  ranges_.insert(ranges_.end(), other.ranges_.begin(), other.ranges_.end());
  normalize();
}

void CharSet::normalize() {
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<std::pair<uint32_t, uint32_t>> merged;
  for (const auto& r : ranges_) {
    if (!merged.empty() && r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  ranges_ = std::move(merged);
}

CharSet CharSet::complement() const {
  return all().minus(*this);
}

CharSet CharSet::minus(const CharSet& other) const {
  CharSet out;
  for (auto [lo, hi] : ranges_) {
    uint32_t cur = lo;
    bool done = false;
    for (const auto& [olo, ohi] : other.ranges_) {
      if (ohi < cur || olo > hi) continue;
      if (olo > cur) out.ranges_.emplace_back(cur, olo - 1);
      if (ohi >= hi) {
        done = true;
        break;
      }
      cur = ohi + 1;
    }
    if (!done) out.ranges_.emplace_back(cur, hi);
  }
  out.normalize();
  return out;
}

CharSet CharSet::intersect(const CharSet& other) const {
  return minus(minus(other));
}

bool CharSet::contains(uint32_t c) const {
  for (const auto& [lo, hi] : ranges_) {
    if (c >= lo && c <= hi) return true;
  }
  return false;
}

std::string CharSet::to_gbnf() const {
  if (ranges_.size() == 1 && ranges_[0].first == ranges_[0].second) {
    return gbnf_literal_code_point(ranges_[0].first);
  }
  std::string out = "[";
  for (const auto& [lo, hi] : ranges_) {
    out += gbnf_class_char(lo);
    if (hi != lo) {
      if (hi != lo + 1) out += '-';
      out += gbnf_class_char(hi);
    }
  }
  out += ']';
  return out;
}

}  // namespace ps
