// The scalar schemas of SchemaCompiler (schema_compiler.h): strings (lengths, patterns,
// formats), integers (digit-range bounds) and numbers. Split from schema_compiler.cpp, which
// holds the structural walk (alternatives, enums, the type dispatch).
#include <cmath>
#include <limits>

#include "structured/char_set.h"
#include "structured/constraint_spec.h"
#include "structured/integer_range.h"
#include "structured/json_formats.h"
#include "structured/number_range.h"
#include "structured/regex_gbnf.h"
#include "structured/schema_compiler.h"

namespace ps {

std::string SchemaCompiler::string_expr(const SchemaJson& s, const std::string& ptr) {
  bool has_len = s.contains("minLength") || s.contains("maxLength");
  const std::string quote = "\"\\\"\"";
  if (s.contains("pattern")) {
    if (has_len || s.contains("format")) {
      schema_error(ptr, "'pattern' together with minLength/maxLength/format is not supported");
    }
    if (!s["pattern"].is_string()) schema_error(child_ptr(ptr, "pattern"), "must be a string");
    return "(" + quote + " " +
           regex_expression(s["pattern"].get<std::string>(), RegexTarget::kJsonStringContent,
                            child_ptr(ptr, "pattern"), any_chars_rule()) +
           " " + quote + ")";
  }
  if (s.contains("format")) {
    if (has_len) schema_error(ptr, "'format' together with minLength/maxLength is not supported");
    if (!s["format"].is_string()) schema_error(child_ptr(ptr, "format"), "must be a string");
    auto f = format_gbnf(s["format"].get<std::string>());
    if (!f) {
      schema_error(child_ptr(ptr, "format"),
                   "the format '" + s["format"].get<std::string>() +
                       "' is not supported (supported: " + supported_formats() + ")");
    }
    return "(" + quote + " " + *f + " " + quote + ")";
  }
  if (!has_len) return string_rule();
  long lo = s.contains("minLength") ? non_negative_count(s, "minLength", ptr) : 0;
  long hi = s.contains("maxLength") ? non_negative_count(s, "maxLength", ptr) : -1;
  if (hi >= 0 && hi < lo) schema_error(ptr, "maxLength is below minLength");
  return bounded_string(lo, hi, ptr);
}

namespace {

// The integer bound a number keyword sets, rounded inward; `exclusive` moves it one step.
std::optional<int64_t> integer_bound(const SchemaJson& v, bool lower, bool exclusive,
                                     const std::string& ptr) {
  if (!v.is_number()) schema_error(ptr, "must be a number");
  double d = v.get<double>();
  if (std::fabs(d) > 4e18) schema_error(ptr, "bounds beyond +-4e18 are not supported");
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    return exclusive ? (lower ? i + 1 : i - 1) : i;
  }
  double r = lower ? std::ceil(d) : std::floor(d);
  if (exclusive && r == d) r += lower ? 1 : -1;
  return static_cast<int64_t>(r);
}

}  // namespace

std::string SchemaCompiler::integer_expr(const SchemaJson& s, const std::string& ptr) {
  std::optional<int64_t> lo, hi;
  auto tighten = [](std::optional<int64_t>& cur, std::optional<int64_t> b, bool lower) {
    if (!b) return;
    if (!cur || (lower ? *b > *cur : *b < *cur)) cur = b;
  };
  // Draft 4 spells exclusiveness as a boolean beside minimum/maximum; later drafts as a number.
  auto draft4_flag = [&](const char* key) {
    return s.contains(key) && s[key].is_boolean() && s[key].get<bool>();
  };
  if (s.contains("minimum")) {
    tighten(lo,
            integer_bound(s["minimum"], true, draft4_flag("exclusiveMinimum"),
                          child_ptr(ptr, "minimum")),
            true);
  }
  if (s.contains("maximum")) {
    tighten(hi,
            integer_bound(s["maximum"], false, draft4_flag("exclusiveMaximum"),
                          child_ptr(ptr, "maximum")),
            false);
  }
  if (s.contains("exclusiveMinimum") && !s["exclusiveMinimum"].is_boolean()) {
    tighten(lo,
            integer_bound(s["exclusiveMinimum"], true, true, child_ptr(ptr, "exclusiveMinimum")),
            true);
  }
  if (s.contains("exclusiveMaximum") && !s["exclusiveMaximum"].is_boolean()) {
    tighten(hi,
            integer_bound(s["exclusiveMaximum"], false, true, child_ptr(ptr, "exclusiveMaximum")),
            false);
  }
  if (lo && hi && *lo > *hi) schema_error(ptr, "no integer lies between the bounds");
  return integer_range_gbnf(lo, hi);
}

std::string SchemaCompiler::number_expr(const SchemaJson& s, const std::string& ptr) {
  std::optional<NumberBound> lo, hi;
  // One bound per side: the tighter of minimum and exclusiveMinimum (draft 4: a flag).
  auto read = [&](const char* key, bool lower, bool exclusive, std::optional<NumberBound>& cur) {
    const auto& v = s[key];
    std::string kptr = child_ptr(ptr, key);
    if (!v.is_number()) schema_error(kptr, std::string("'") + key + "' must be a number");
    double d = v.get<double>();
    if (std::floor(d) != d || std::fabs(d) > 4e18) {
      schema_error(kptr, std::string("'") + key +
                             "' on a number is enforced only for integer values (as "
                             "bounds of the integer part)");
    }
    NumberBound b{static_cast<int64_t>(d), exclusive};
    bool tighter = !cur || (lower ? (b.value > cur->value || (b.value == cur->value && exclusive))
                                  : (b.value < cur->value || (b.value == cur->value && exclusive)));
    if (tighter) cur = b;
  };
  auto draft4_flag = [&](const char* key) {
    return s.contains(key) && s[key].is_boolean() && s[key].get<bool>();
  };
  if (s.contains("minimum")) read("minimum", true, draft4_flag("exclusiveMinimum"), lo);
  if (s.contains("maximum")) read("maximum", false, draft4_flag("exclusiveMaximum"), hi);
  if (s.contains("exclusiveMinimum") && !s["exclusiveMinimum"].is_boolean()) {
    read("exclusiveMinimum", true, true, lo);
  }
  if (s.contains("exclusiveMaximum") && !s["exclusiveMaximum"].is_boolean()) {
    read("exclusiveMaximum", false, true, hi);
  }
  if (!lo && !hi) return number_rule();
  try {
    return number_range_gbnf(lo, hi);
  } catch (const std::invalid_argument&) {
    schema_error(ptr, "no number lies between the bounds");
  }
}

}  // namespace ps
