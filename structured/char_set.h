#pragma once
// A set of Unicode code points as sorted, disjoint, non-adjacent closed ranges: what a regex
// class, `.` or a JSON string character becomes before it is written as a GBNF class.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ps {

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

class CharSet {
 public:
  CharSet() = default;
  static CharSet range(uint32_t lo, uint32_t hi);
  static CharSet single(uint32_t c) { return range(c, c); }
  // Every scalar value (surrogates excluded: they never appear in UTF-8 text).
  static CharSet all();

  void add(uint32_t lo, uint32_t hi);
  void add(const CharSet& other);
  CharSet complement() const;  // relative to all()
  CharSet minus(const CharSet& other) const;
  CharSet intersect(const CharSet& other) const;
  bool contains(uint32_t c) const;
  bool empty() const { return ranges_.empty(); }
  const std::vector<std::pair<uint32_t, uint32_t>>& ranges() const { return ranges_; }

  // As a GBNF class `[...]` (or a literal for one code point).
  std::string to_gbnf() const;

 private:
  void normalize();
  std::vector<std::pair<uint32_t, uint32_t>> ranges_;
};

}  // namespace ps
