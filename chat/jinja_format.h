#pragma once
// Python string formatting for templates: `'%s: %d' % (a, b)`, `'%s'|format(x)` and
// `'{} {name}'.format(a, name=b)`.
#include <string>

#include "chat/jinja_value.h"

namespace ps::jinja {

// printf-style: `args` is a tuple of values or a single value.
std::string printf_format(const std::string& fmt, const Value& args);
// str.format with automatic, numbered and named fields (no format specs).
std::string brace_format(const std::string& fmt, const CallArgs& args);

}  // namespace ps::jinja
