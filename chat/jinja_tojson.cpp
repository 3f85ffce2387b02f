// transformers replaces Jinja2's tojson (which sorts keys and HTML-escapes) with
// json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys);
// this reproduces Python's json.dumps byte for byte for the values a template can hold.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat/jinja_value.h"

namespace ps::jinja {

JsonStyle default_json_style(bool has_indent, std::string indent) {
  JsonStyle s;
  s.has_indent = has_indent;
  s.indent = std::move(indent);
  // Python: separators default to (', ', ': '), or (',', ': ') when indent is given.
  s.item_separator = has_indent ? "," : ", ";
  s.key_separator = ": ";
  return s;
}

static void quote(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (u < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", u);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

static std::string key_text(const Value& k) {
  // json.dumps turns non-string keys into strings the way JSON would print them.
  if (k.is_string()) return k.string();
  if (k.is_bool()) return k.boolean() ? "true" : "false";
  if (k.is_none()) return "null";
  if (k.is_int()) return std::to_string(k.integer());
  if (k.is_float()) return format_float(k.number());
  throw ValueError("keys must be str, int, float, bool or None, not " + type_name(k));
}

static void newline(std::string& out, const JsonStyle& style, int level) {
  out += '\n';
  for (int i = 0; i < level; ++i) out += style.indent;
}

static void dump(std::string& out, const Value& v, const JsonStyle& style, int level) {
  switch (v.kind()) {
    case Value::Kind::kNone:
      out += "null";
      return;
    case Value::Kind::kBool:
      out += v.boolean() ? "true" : "false";
      return;
    case Value::Kind::kInt:
      out += std::to_string(v.integer());
      return;
    case Value::Kind::kFloat: {
      double f = v.number();
      if (std::isnan(f))
        out += "NaN";
      else if (std::isinf(f))
        out += f < 0 ? "-Infinity" : "Infinity";
      else
        out += format_float(f);
      return;
    }
    case Value::Kind::kString:
      quote(out, v.string());
      return;
    case Value::Kind::kList: {
      if (v.items().empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < v.items().size(); ++i) {
        if (i) out += style.item_separator;
        if (style.has_indent) newline(out, style, level + 1);
        dump(out, v.items()[i], style, level + 1);
      }
      if (style.has_indent) newline(out, style, level);
      out += ']';
      return;
    }
    case Value::Kind::kDict: {
      if (v.is_namespace()) break;
      std::vector<std::pair<std::string, const Value*>> entries;
      for (const auto& [k, x] : v.dict_data().items) entries.emplace_back(key_text(k), &x);
      if (style.sort_keys)
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      if (entries.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += style.item_separator;
        if (style.has_indent) newline(out, style, level + 1);
        quote(out, entries[i].first);
        out += style.key_separator;
        dump(out, *entries[i].second, style, level + 1);
      }
      if (style.has_indent) newline(out, style, level);
      out += '}';
      return;
    }
    default:
      break;
  }
  throw ValueError("Object of type " + type_name(v) + " is not JSON serializable");
}

std::string to_json_text(const Value& v, const JsonStyle& style) {
  std::string out;
  dump(out, v, style, 0);
  return out;
}

}  // namespace ps::jinja
