// String formatting: Python's printf-style `'%s' % x` (also the `format` filter) and
// str.format's `'{} {name}'.format(...)`, for the conversions templates use.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat/jinja_format.h"
#include "chat/jinja_render.h"

namespace ps::jinja {

namespace {

std::string convert(char conv, const std::string& flags, const Value& v) {
  char spec[32];
  char buf[512];
  if (conv == 's' || conv == 'r' || conv == 'a') {
    std::string text = conv == 's' ? to_str(v) : to_repr(v);
    std::snprintf(spec, sizeof spec, "%%%ss", flags.c_str());
    int n = std::snprintf(nullptr, 0, spec, text.c_str());
    std::string out(static_cast<size_t>(n), '\0');
    std::snprintf(out.data(), out.size() + 1, spec, text.c_str());
    return out;
  }
  if (!v.is_number() && !v.is_bool())
    throw ValueError(std::string("%") + conv + " format: a real number is required, not " +
                     type_name(v));
  if (conv == 'd' || conv == 'i' || conv == 'x' || conv == 'X' || conv == 'o') {
    long long i = v.is_float() ? static_cast<long long>(std::trunc(v.number())) : v.integer();
    std::snprintf(spec, sizeof spec, "%%%sll%c", flags.c_str(), conv == 'i' ? 'd' : conv);
    std::snprintf(buf, sizeof buf, spec, i);
    return buf;
  }
  if (conv == 'f' || conv == 'F' || conv == 'e' || conv == 'E' || conv == 'g' || conv == 'G') {
    std::snprintf(spec, sizeof spec, "%%%s%c", flags.c_str(), conv);
    std::snprintf(buf, sizeof buf, spec, v.number());
    return buf;
  }
  throw ValueError(std::string("unsupported format character '") + conv + "'");
}

}  // namespace

std::string printf_format(const std::string& fmt, const Value& args) {
  std::vector<Value> values = args.is_tuple() ? args.items() : std::vector<Value>{args};
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    std::string flags;
    size_t j = i + 1;
    while (j < fmt.size() && std::string("-+ #0123456789.").find(fmt[j]) != std::string::npos)
      flags += fmt[j++];
    if (j >= fmt.size()) throw ValueError("incomplete format");
    if (flags.size() > 8) throw ValueError("format flags too long");
    if (next >= values.size()) throw ValueError("not enough arguments for format string");
    out += convert(fmt[j], flags, values[next++]);
    i = j;
  }
  if (next < values.size() && args.is_tuple())
    throw ValueError("not all arguments converted during string formatting");
  return out;
}

std::string brace_format(const std::string& fmt, const CallArgs& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if ((c == '{' || c == '}') && i + 1 < fmt.size() && fmt[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') throw ValueError("Single '}' encountered in format string");
    if (c != '{') {
      out += c;
      continue;
    }
    size_t close = fmt.find('}', i);
    if (close == std::string::npos) throw ValueError("Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!") != std::string::npos)
      throw ValueError("format specs in str.format are not supported");
    const Value* v = nullptr;
    if (field.empty()) {
      if (auto_index >= args.positional.size()) throw ValueError("Replacement index out of range");
      v = &args.positional[auto_index++];
    } else if (std::all_of(field.begin(), field.end(), ::isdigit)) {
      size_t k = std::stoul(field);
      if (k >= args.positional.size()) throw ValueError("Replacement index out of range");
      v = &args.positional[k];
    } else {
      for (const auto& [key, x] : args.keyword)
        if (key == field) v = &x;
      if (!v) throw ValueError("KeyError: '" + field + "'");
    }
    out += to_str(*v);
    i = close;
  }
  return out;
}

}  // namespace ps::jinja
