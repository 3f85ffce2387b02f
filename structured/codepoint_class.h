#pragma once
#include <cstdint>
#include <vector>

#include "structured/grammar.h"

namespace ps {

// Sorted, merged ranges with the surrogates (U+D800..U+DFFF, never valid in UTF-8) removed.
std::vector<CodepointRange> normalize_class(std::vector<CodepointRange> ranges);
// Every scalar value not in `ranges` (which must be normalized).
std::vector<CodepointRange> complement_class(const std::vector<CodepointRange>& ranges);
// `.`: every Unicode scalar value.
std::vector<CodepointRange> any_codepoint();

// Where a byte-at-a-time decode of one code point stands: 0 before its first byte, else the
// bits decoded so far, the bytes still missing and the sequence length (packed, so a matcher
// stack stays two words).
struct Utf8Partial {
  static uint32_t pack(uint32_t value, uint32_t missing, uint32_t length) {
    return value | (missing << 24) | (length << 28);
  }
  static uint32_t value(uint32_t p) { return p & 0x1FFFFF; }
  static uint32_t missing(uint32_t p) { return (p >> 24) & 0xF; }
  static uint32_t length(uint32_t p) { return p >> 28; }
};

// One byte of a code point against a class. kReject: no code point of the class can continue
// this way (including ill-formed UTF-8); kMore: `partial` is updated, more bytes needed;
// kDone: a whole code point of the class was read.
enum class ClassStep : uint8_t { kReject, kMore, kDone };

// A class with what a fast first-byte test needs.
class CodepointClass {
 public:
  explicit CodepointClass(std::vector<CodepointRange> ranges);
  ClassStep step(uint32_t& partial, uint8_t byte) const;
  bool contains(uint32_t cp) const;
  // Byte b can be the first byte of a code point of this class.
  bool can_start_with(uint8_t b) const { return first_byte_[b / 64] >> (b % 64) & 1; }
  const std::vector<CodepointRange>& ranges() const { return ranges_; }

 private:
  bool intersects(uint32_t lo, uint32_t hi) const;
  ClassStep step_without_table(uint32_t& partial, uint8_t byte) const;
  std::vector<CodepointRange> ranges_;
  // Bit b: byte b can start a code point of this class (for ASCII: is one).
  uint64_t first_byte_[4] = {0, 0, 0, 0};
};

}  // namespace ps
