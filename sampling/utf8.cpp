#include "sampling/utf8.h"

namespace ps {

Utf8Unit next_utf8_unit(std::string_view s, size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  if (lead < 0x80) return {Utf8Status::kValid, 1};
  size_t len = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
  } else {
    return {Utf8Status::kInvalid, 1};  // continuation byte without a lead, C0, C1, F5..FF
  }
  for (size_t k = 1; k < len; ++k) {
    if (i + k >= s.size()) return {Utf8Status::kTruncated, k};
    const auto c = static_cast<unsigned char>(s[i + k]);
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (k == 1) {
      // The second byte also rules out overlong forms, surrogates and > U+10FFFF.
      if (lead == 0xE0) lo = 0xA0;
      if (lead == 0xED) hi = 0x9F;
      if (lead == 0xF0) lo = 0x90;
      if (lead == 0xF4) hi = 0x8F;
    }
    if (c < lo || c > hi) return {Utf8Status::kInvalid, k};
  }
  return {Utf8Status::kValid, len};
}

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const Utf8Unit u = next_utf8_unit(s, i);
    if (u.status != Utf8Status::kValid) return false;
    i += u.length;
  }
  return true;
}

}  // namespace ps
