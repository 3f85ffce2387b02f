#pragma once
// GPT-2's byte <-> printable-character mapping that byte-level BPE vocabularies are written in,
// and the strict UTF-8 checks the tokenizer needs to keep invalid input away from PCRE2.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ps {

// The vocab-file spelling of one raw byte (UTF-8 of a code point in U+0021..U+0143).
const std::array<std::string, 256>& byte_level_chars();

// The raw bytes a vocab string stands for. A string holding any character outside the byte-level
// alphabet (an added token such as "<|im_start|>" is inside it; a stray "€" is not) is taken
// literally, which is what the Hugging Face ByteLevel decoder does.
std::string byte_level_decode(std::string_view vocab_string);

// The vocab-file spelling of raw bytes (inverse of byte_level_decode for byte-level strings).
std::string byte_level_encode(std::string_view raw);

// Length of the well-formed UTF-8 sequence starting at s[pos], or 0 if the bytes there are not
// one (overlong forms, surrogates and code points above U+10FFFF count as ill-formed, exactly as
// PCRE2's own UTF check rules them).
size_t utf8_sequence_length(std::string_view s, size_t pos);

// Decodes the well-formed sequence of `len` bytes at s[pos].
char32_t utf8_decode_at(std::string_view s, size_t pos, size_t len);

// Appends the UTF-8 encoding of code point `cp` (which must be a valid scalar value).
void append_utf8(std::string& out, char32_t cp);

// Unicode White_Space property (what Oniguruma and the JS library mean by \s).
bool is_unicode_white_space(char32_t cp);

}  // namespace ps
