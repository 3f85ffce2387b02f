#pragma once
// Digit-range grammars: a GBNF expression for the JSON integers (no leading zeros, no "-0")
// between two optional bounds, inclusive.

#include <cstdint>
#include <optional>
#include <string>

namespace ps {

// Throws std::invalid_argument if lo > hi.
std::string integer_range_gbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);

}  // namespace ps
