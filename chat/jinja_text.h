#pragma once
// Python str semantics over UTF-8 bytes: Python indexes, slices and measures strings in code
// points, so a template's `content[-1]` or `|length` must too.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ps::jinja::text {

// Code points of `s`; an invalid byte is taken as one code point of its own value, so
// decode/encode round-trips any byte string.
std::vector<uint32_t> decode(std::string_view s);
std::string encode(const std::vector<uint32_t>& cps, size_t begin, size_t end);
void append_utf8(std::string& out, uint32_t cp);
size_t length(std::string_view s);
bool is_ascii(std::string_view s);

// Python's str.isspace() for the characters chat text contains (ASCII, NBSP, the Unicode
// spaces, line/paragraph separators).
bool is_space(uint32_t cp);

// str.strip()/lstrip()/rstrip(): `chars` empty-and-not-given means whitespace.
std::string strip(std::string_view s, bool left, bool right, const std::string* chars);
// str.split(sep, maxsplit) and str.split() (whitespace runs, no empty parts).
std::vector<std::string> split(std::string_view s, const std::string* sep, int64_t maxsplit);
std::vector<std::string> rsplit(std::string_view s, const std::string* sep, int64_t maxsplit);
std::string replace(std::string_view s, std::string_view from, std::string_view to, int64_t count);
// ASCII case mapping (chat templates apply these to roles and names).
std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);
std::string capitalize(std::string_view s);

}  // namespace ps::jinja::text
