#include "structured/gbnf_text.h"

#include <cstdio>
#include <stdexcept>

namespace ps {
namespace {

std::string hex_escape(uint32_t c) {
  char buf[16];
  if (c < 0x100) {
    std::snprintf(buf, sizeof buf, "\\x%02X", c);
  } else if (c < 0x10000) {
    std::snprintf(buf, sizeof buf, "\\u%04X", c);
  } else {
    std::snprintf(buf, sizeof buf, "\\U%08X", c);
  }
  return buf;
}

bool printable_ascii(uint32_t c) {
  return c >= 0x20 && c < 0x7F;
}

}  // namespace

uint32_t decode_utf8(std::string_view s, size_t& pos) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char b0 = byte(pos);
  int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || pos + len > s.size()) throw std::invalid_argument("invalid UTF-8");
  uint32_t c = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (int i = 1; i < len; ++i) {
    unsigned char b = byte(pos + i);
    if ((b & 0xC0) != 0x80) throw std::invalid_argument("invalid UTF-8");
    c = (c << 6) | (b & 0x3F);
  }
  static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMinForLength[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
    throw std::invalid_argument("invalid UTF-8");
  }
  pos += len;
  return c;
}

std::string encode_utf8(uint32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

std::string gbnf_literal_code_point(uint32_t c) {
  std::string out = "\"";
  if (c == '"' || c == '\\') {
    out += '\\';
    out += static_cast<char>(c);
  } else if (printable_ascii(c)) {
    out += static_cast<char>(c);
  } else {
    out += hex_escape(c);
  }
  return out + "\"";
}

std::string gbnf_literal(std::string_view utf8) {
  std::string out = "\"";
  size_t pos = 0;
  while (pos < utf8.size()) {
    uint32_t c = decode_utf8(utf8, pos);
    std::string one = gbnf_literal_code_point(c);
    out += one.substr(1, one.size() - 2);
  }
  return out + "\"";
}

std::string gbnf_class_char(uint32_t c) {
  if (c == ']' || c == '\\' || c == '^' || c == '-' || c == '[') {
    return std::string("\\") + static_cast<char>(c);
  }
  if (printable_ascii(c)) return std::string(1, static_cast<char>(c));
  return hex_escape(c);
}

std::string GbnfRules::reserve(std::string_view hint) {
  std::string base = prefix_ + "-";
  for (char ch : hint) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '_';
    base += ok ? ch : '_';
  }
  std::string name = base;
  for (int n = 2; bodies_.count(name) || reserved_.count(name); ++n) {
    name = base + "-" + std::to_string(n);
  }
  reserved_[name] = true;
  return name;
}

void GbnfRules::define(const std::string& name, std::string body) {
  if (bodies_.count(name)) throw std::logic_error("GBNF rule defined twice: " + name);
  reserved_.erase(name);
  name_of_body_.emplace(body, name);
  bodies_[name] = std::move(body);
  order_.push_back(name);
}

std::string GbnfRules::add(std::string_view hint, std::string body) {
  auto it = name_of_body_.find(body);
  if (it != name_of_body_.end()) return it->second;
  std::string name = reserve(hint);
  define(name, std::move(body));
  return name;
}

std::string GbnfRules::text() const {
  if (!reserved_.empty()) {
    throw std::logic_error("GBNF rule reserved but never defined: " + reserved_.begin()->first);
  }
  std::string out;
  auto it = bodies_.find(prefix_);
  if (it != bodies_.end()) out += prefix_ + " ::= " + it->second + "\n";
  for (const auto& name : order_) {
    if (name == prefix_) continue;
    out += name + " ::= " + bodies_.at(name) + "\n";
  }
  return out;
}

std::string gbnf_group(const std::vector<std::string>& alts) {
  std::string out = "(";
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out + ")";
}

std::string gbnf_alternatives(const std::vector<std::string>& alts) {
  return alts.size() == 1 ? alts[0] : gbnf_group(alts);
}

}  // namespace ps
