#pragma once
#include <cstddef>
#include <string_view>

namespace ps {

// What the bytes at one position of a byte string are.
enum class Utf8Status {
  kValid,      // one whole, well-formed character
  kInvalid,    // can never become a character: replace with one U+FFFD
  kTruncated,  // a well-formed start that the end of the string cut off: wait for more bytes
};

struct Utf8Unit {
  Utf8Status status;
  size_t length;  // bytes this unit covers (for kInvalid: the maximal ill-formed subpart)
};

// The UTF-8 replacement character, U+FFFD.
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// Classifies s[i...] by the Unicode rules (no overlongs, surrogates, or code points above
// U+10FFFF). An invalid sequence covers its maximal subpart, so "one U+FFFD per invalid
// sequence" matches what browsers and Python's errors="replace" print. Requires i < s.size().
Utf8Unit next_utf8_unit(std::string_view s, size_t i);

bool is_valid_utf8(std::string_view s);

}  // namespace ps
