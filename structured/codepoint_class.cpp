#include "structured/codepoint_class.h"

#include <algorithm>

namespace ps {
namespace {

constexpr uint32_t kMaxCodepoint = 0x10FFFF;
constexpr uint32_t kSurrogateLo = 0xD800;
constexpr uint32_t kSurrogateHi = 0xDFFF;

// The code points a UTF-8 sequence of `length` bytes may encode (no overlongs).
void length_bounds(uint32_t length, uint32_t& lo, uint32_t& hi) {
  switch (length) {
    case 1:
      lo = 0, hi = 0x7F;
      break;
    case 2:
      lo = 0x80, hi = 0x7FF;
      break;
    case 3:
      lo = 0x800, hi = 0xFFFF;
      break;
    default:
      lo = 0x10000, hi = kMaxCodepoint;
      break;
  }
}

}  // namespace

std::vector<CodepointRange> normalize_class(std::vector<CodepointRange> ranges) {
  std::vector<CodepointRange> split;
  for (auto r : ranges) {
    r.hi = std::min(r.hi, kMaxCodepoint);
    if (r.lo > r.hi) continue;
    // Drop the surrogate block from inside a range.
    if (r.lo < kSurrogateLo && r.hi > kSurrogateHi) {
      split.push_back({r.lo, kSurrogateLo - 1});
      split.push_back({kSurrogateHi + 1, r.hi});
      continue;
    }
    if (r.lo >= kSurrogateLo && r.lo <= kSurrogateHi) r.lo = kSurrogateHi + 1;
    if (r.hi >= kSurrogateLo && r.hi <= kSurrogateHi) r.hi = kSurrogateLo - 1;
    if (r.lo <= r.hi) split.push_back(r);
  }
  std::sort(split.begin(), split.end(),
            [](const CodepointRange& a, const CodepointRange& b) { return a.lo < b.lo; });
  std::vector<CodepointRange> out;
  for (const auto& r : split) {
    if (!out.empty() && r.lo <= out.back().hi + 1) {
      out.back().hi = std::max(out.back().hi, r.hi);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

std::vector<CodepointRange> complement_class(const std::vector<CodepointRange>& ranges) {
  std::vector<CodepointRange> out;
  uint32_t next = 0;
  for (const auto& r : ranges) {
    if (r.lo > next) out.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= kMaxCodepoint) out.push_back({next, kMaxCodepoint});
  return normalize_class(std::move(out));
}

std::vector<CodepointRange> any_codepoint() {
  return normalize_class({{0, kMaxCodepoint}});
}

CodepointClass::CodepointClass(std::vector<CodepointRange> ranges) : ranges_(std::move(ranges)) {
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t partial = 0;
    ClassStep s = step_without_table(partial, static_cast<uint8_t>(b));
    if (s != ClassStep::kReject) first_byte_[b / 64] |= uint64_t{1} << (b % 64);
  }
}

bool CodepointClass::contains(uint32_t cp) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), cp,
                             [](uint32_t v, const CodepointRange& r) { return v < r.lo; });
  return it != ranges_.begin() && std::prev(it)->hi >= cp;
}

bool CodepointClass::intersects(uint32_t lo, uint32_t hi) const {
  // First range whose end reaches lo.
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), lo,
                             [](const CodepointRange& r, uint32_t v) { return r.hi < v; });
  return it != ranges_.end() && it->lo <= hi;
}

ClassStep CodepointClass::step(uint32_t& partial, uint8_t byte) const {
  if (partial == 0) {
    if (!(first_byte_[byte / 64] >> (byte % 64) & 1)) return ClassStep::kReject;
    if (byte < 0x80) return ClassStep::kDone;
  }
  return step_without_table(partial, byte);
}

ClassStep CodepointClass::step_without_table(uint32_t& partial, uint8_t byte) const {
  uint32_t value, missing, length;
  if (partial == 0) {
    if (byte < 0x80) return contains(byte) ? ClassStep::kDone : ClassStep::kReject;
    if (byte >= 0xC2 && byte <= 0xDF) {
      value = byte & 0x1F, missing = 1, length = 2;
    } else if (byte >= 0xE0 && byte <= 0xEF) {
      value = byte & 0x0F, missing = 2, length = 3;
    } else if (byte >= 0xF0 && byte <= 0xF4) {
      value = byte & 0x07, missing = 3, length = 4;
    } else {
      return ClassStep::kReject;
    }
  } else {
    if ((byte & 0xC0) != 0x80) return ClassStep::kReject;
    value = (Utf8Partial::value(partial) << 6) | (byte & 0x3F);
    missing = Utf8Partial::missing(partial) - 1;
    length = Utf8Partial::length(partial);
  }
  // The code points this prefix can still become, within the no-overlong bounds.
  uint32_t lo = value << (6 * missing);
  uint32_t hi = lo | ((uint32_t{1} << (6 * missing)) - 1);
  uint32_t min_cp, max_cp;
  length_bounds(length, min_cp, max_cp);
  lo = std::max(lo, min_cp);
  hi = std::min(hi, max_cp);
  if (lo > hi || !intersects(lo, hi)) return ClassStep::kReject;
  if (missing == 0) return ClassStep::kDone;  // ranges_ hold no surrogates, so lo is valid
  partial = Utf8Partial::pack(value, missing, length);
  return ClassStep::kMore;
}

}  // namespace ps
