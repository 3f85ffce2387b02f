// The classic split of [lo, hi] into runs that share a prefix: for equal-length decimal
// strings, the first differing digit splits the range into lo's tail up to 99..9, whole digit
// runs in between, and 00..0 up to hi's tail; different lengths split at the powers of ten.

#include "structured/integer_range.h"
#include "structured/gbnf_text.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace ps {
namespace {

std::string digit_class(char lo, char hi) {
  if (lo == '0' && hi == '9') return "[0-9]";
  // Built in place: GCC 12 warns (-Wrestrict, a false positive) on chained char concatenation.
  std::string out = lo == hi ? "\"x\"" : "[x-y]";
  out[1] = lo;
  if (lo != hi) out[3] = hi;
  return out;
}

std::string any_digits(size_t n) {
  if (n == 0) return "";
  if (n == 1) return "[0-9]";
  return "[0-9]{" + std::to_string(n) + "}";
}

std::string seq(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + " " + b;
}

bool all_of(const std::string& s, size_t from, char c) {
  return s.find_first_not_of(c, from) == std::string::npos;
}

// Alternatives matching every digit string of lo.size() digits in [lo, hi] (same length).
void same_length(const std::string& lo, const std::string& hi, std::vector<std::string>& out,
                 const std::string& prefix) {
  size_t n = lo.size();
  size_t i = 0;
  std::string common = prefix;
  while (i < n && lo[i] == hi[i]) ++i;
  if (i > 0) {
    std::string literal = "\"";
    literal.append(lo, 0, i);
    literal += '"';
    common = seq(prefix, literal);
  }
  if (i == n) {
    out.push_back(common);
    return;
  }
  size_t rest = n - i - 1;
  bool lo_tail_zero = all_of(lo, i + 1, '0');
  bool hi_tail_nine = all_of(hi, i + 1, '9');
  char first = lo_tail_zero ? lo[i] : static_cast<char>(lo[i] + 1);
  char last = hi_tail_nine ? hi[i] : static_cast<char>(hi[i] - 1);
  if (!lo_tail_zero) {
    same_length(lo.substr(i + 1), std::string(rest, '9'), out,
                seq(common, digit_class(lo[i], lo[i])));
  }
  if (first <= last) out.push_back(seq(seq(common, digit_class(first, last)), any_digits(rest)));
  if (!hi_tail_nine) {
    same_length(std::string(rest, '0'), hi.substr(i + 1), out,
                seq(common, digit_class(hi[i], hi[i])));
  }
}

// Non-negative integers in [lo, hi] (hi absent: unbounded), as alternatives.
void unsigned_range(uint64_t lo, std::optional<uint64_t> hi, std::vector<std::string>& out) {
  std::string los = std::to_string(lo);
  if (!hi) {
    same_length(los, std::string(los.size(), '9'), out, "");
    out.push_back("[1-9] [0-9]{" + std::to_string(los.size()) + ",}");  // every longer number
    return;
  }
  size_t max_len = std::to_string(*hi).size();
  for (size_t len = los.size(); len <= max_len; ++len) {
    std::string from = len == los.size() ? los : "1" + std::string(len - 1, '0');
    std::string to = len == max_len ? std::to_string(*hi) : std::string(len, '9');
    same_length(from, to, out, "");
  }
}

uint64_t magnitude(int64_t v) {
  return v < 0 ? 0 - static_cast<uint64_t>(v) : v;
}

}  // namespace

std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  if (lo && hi && *lo > *hi) throw std::invalid_argument("empty integer range");
  if (!lo && !hi) return "(\"-\"? (\"0\" | [1-9] [0-9]*))";
  std::vector<std::string> alts;
  // The negative side: "-" then magnitudes in [max(1, -hi), -lo].
  if (!lo || *lo < 0) {
    uint64_t from = hi && *hi < 0 ? magnitude(*hi) : 1;
    std::optional<uint64_t> to;
    if (lo) to = magnitude(*lo);
    std::vector<std::string> neg;
    unsigned_range(from, to, neg);
    alts.push_back("\"-\" " + gbnf_group(neg));
  }
  // The non-negative side: [max(0, lo), hi].
  if (!hi || *hi >= 0) {
    uint64_t from = lo && *lo > 0 ? static_cast<uint64_t>(*lo) : 0;
    std::optional<uint64_t> to;
    if (hi) to = static_cast<uint64_t>(*hi);
    unsigned_range(from, to, alts);
  }
  return gbnf_group(alts);
}

}  // namespace ps
