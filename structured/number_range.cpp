#include "structured/number_range.h"

#include <stdexcept>
#include <vector>

#include "structured/gbnf_text.h"
#include "structured/integer_range.h"

namespace ps {
namespace {

const char* kAnyFraction = "(\".\" [0-9]+)?";
const char* kZeroFraction = "(\".\" \"0\"+)?";
const char* kNonZeroFraction = "\".\" [0-9]* [1-9] [0-9]*";

std::string literal(int64_t v) {
  return "\"" + std::to_string(v) + "\"";
}

// Alternatives for magnitudes m = I.f >= 0 (written without sign) with lower <= m <= upper,
// both bounds >= 0 when present.
void magnitudes(NumberBound lower, std::optional<NumberBound> upper,
                std::vector<std::string>& out) {
  // Integer parts whose every fraction is inside.
  int64_t core_lo = lower.exclusive ? lower.value + 1 : lower.value;
  std::optional<int64_t> core_hi;
  if (upper) core_hi = upper->value - 1;
  if (!core_hi || core_lo <= *core_hi) {
    out.push_back(integer_range_gbnf(core_lo, core_hi) + " " + kAnyFraction);
  }
  // m just above an exclusive lower bound: L.f with f not zero, if that is below the upper one.
  if (lower.exclusive && (!upper || upper->value > lower.value)) {
    out.push_back(literal(lower.value) + " " + kNonZeroFraction);
  }
  // m equal to an inclusive upper bound, if the lower one allows it.
  if (upper && !upper->exclusive &&
      (upper->value > lower.value || (upper->value == lower.value && !lower.exclusive))) {
    out.push_back(literal(upper->value) + " " + kZeroFraction);
  }
}

}  // namespace

std::string number_range_gbnf(std::optional<NumberBound> lo, std::optional<NumberBound> hi) {
  std::vector<std::string> alts;
  // x >= 0, written as its magnitude.
  bool nonneg = !hi || hi->value > 0 || (hi->value == 0 && !hi->exclusive);
  if (nonneg) {
    NumberBound lower{0, false};
    if (lo && lo->value >= 0) lower = *lo;
    std::optional<NumberBound> upper = hi;
    magnitudes(lower, upper, alts);
  }
  // x < 0 as "-" m with m > 0: x >= L is m <= -L, x <= H (H <= 0) is m >= -H.
  bool negative = !lo || lo->value < 0;
  if (negative) {
    NumberBound lower{0, true};
    if (hi && hi->value < 0) lower = {-hi->value, hi->exclusive};
    std::optional<NumberBound> upper;
    if (lo) upper = NumberBound{-lo->value, lo->exclusive};
    std::vector<std::string> neg;
    magnitudes(lower, upper, neg);
    if (!neg.empty()) alts.push_back("\"-\" " + gbnf_group(neg));
  }
  if (alts.empty()) throw std::invalid_argument("no number lies between the bounds");
  return gbnf_group(alts);
}

}  // namespace ps
