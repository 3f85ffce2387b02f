#pragma once
// JSON numbers between integer-valued bounds: an integer part from a digit-range grammar and a
// fraction whose digits decide the boundary cases (x <= 3 allows "3" and "3.00", not "3.5").
// No exponents under bounds.

#include <cstdint>
#include <optional>
#include <string>

namespace ps {

struct NumberBound {
  int64_t value = 0;
  bool exclusive = false;
};

// Throws std::invalid_argument if no number lies between the bounds.
std::string number_range_gbnf(std::optional<NumberBound> lo, std::optional<NumberBound> hi);

}  // namespace ps
