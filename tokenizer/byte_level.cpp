#include "tokenizer/byte_level.h"

#include <vector>

namespace ps {
namespace {

// Bytes that are printable Latin-1 keep their own code point; the rest are moved to 256, 257, ...
// in byte order, so every byte gets a visible, whitespace-free character.
struct ByteTables {
  std::array<std::string, 256> chars;
  std::vector<int> byte_of_codepoint;  // index: code point < 324; -1 if not in the alphabet

  ByteTables() : byte_of_codepoint(324, -1) {
    char32_t next_shifted = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      char32_t cp = printable ? static_cast<char32_t>(b) : next_shifted++;
      append_utf8(chars[b], cp);
      byte_of_codepoint[cp] = b;
    }
  }
};

const ByteTables& tables() {
  static const ByteTables t;
  return t;
}

}  // namespace

const std::array<std::string, 256>& byte_level_chars() {
  return tables().chars;
}

std::string byte_level_decode(std::string_view vocab_string) {
  const auto& byte_of = tables().byte_of_codepoint;
  std::string raw;
  raw.reserve(vocab_string.size());
  size_t pos = 0;
  while (pos < vocab_string.size()) {
    size_t len = utf8_sequence_length(vocab_string, pos);
    if (len == 0) return std::string(vocab_string);
    char32_t cp = utf8_decode_at(vocab_string, pos, len);
    if (cp >= byte_of.size() || byte_of[cp] < 0) return std::string(vocab_string);
    raw.push_back(static_cast<char>(byte_of[cp]));
    pos += len;
  }
  return raw;
}

std::string byte_level_encode(std::string_view raw) {
  const auto& chars = tables().chars;
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char b : raw) out += chars[b];
  return out;
}

size_t utf8_sequence_length(std::string_view s, size_t pos) {
  auto at = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  size_t avail = s.size() - pos;
  unsigned char c = at(pos);
  if (c < 0x80) return 1;
  auto cont = [&](size_t i) { return (at(pos + i) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return avail >= 2 && cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (avail < 3 || !cont(1) || !cont(2)) return 0;
    unsigned char c1 = at(pos + 1);
    if (c == 0xE0 && c1 < 0xA0) return 0;  // overlong
    if (c == 0xED && c1 > 0x9F) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (avail < 4 || !cont(1) || !cont(2) || !cont(3)) return 0;
    unsigned char c1 = at(pos + 1);
    if (c == 0xF0 && c1 < 0x90) return 0;  // overlong
    if (c == 0xF4 && c1 > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;  // stray continuation byte, C0/C1 overlong lead, or F5..FF
}

char32_t utf8_decode_at(std::string_view s, size_t pos, size_t len) {
  auto at = [&](size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(s[pos + i])); };
  switch (len) {
    case 1:
      return at(0);
    case 2:
      return ((at(0) & 0x1F) << 6) | (at(1) & 0x3F);
    case 3:
      return ((at(0) & 0x0F) << 12) | ((at(1) & 0x3F) << 6) | (at(2) & 0x3F);
    default:
      return ((at(0) & 0x07) << 18) | ((at(1) & 0x3F) << 12) | ((at(2) & 0x3F) << 6) |
             (at(3) & 0x3F);
  }
}

bool is_unicode_white_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace ps
