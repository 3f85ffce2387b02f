// Jinja2's builtin filters that chat templates use, plus transformers' tojson: the filter table,
// and the string and number filters. Those over sequences and mappings are
// jinja_list_filters.cpp's.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "chat/jinja_filters_internal.h"
#include "chat/jinja_format.h"
#include "chat/jinja_render.h"
#include "chat/jinja_text.h"

namespace ps::jinja {

const Value* arg(const CallArgs& args, size_t index, const char* keyword) {
  if (index < args.positional.size()) return &args.positional[index];
  for (const auto& [k, v] : args.keyword)
    if (k == keyword) return &v;
  return nullptr;
}

namespace {

int64_t length_of(const Value& v) {
  if (v.is_string()) return static_cast<int64_t>(text::length(v.string()));
  if (v.is_list()) return static_cast<int64_t>(v.items().size());
  if (v.is_dict()) return static_cast<int64_t>(v.dict_data().items.size());
  if (v.is_undefined()) return 0;
  throw ValueError("object of type '" + type_name(v) + "' has no len()");
}

Value do_tojson(const Value& v, const CallArgs& args) {
  // transformers' signature: tojson(x, ensure_ascii=False, indent=None, separators=None,
  // sort_keys=False); templates mostly write tojson(indent=2).
  const Value* ensure_ascii = arg(args, 0, "ensure_ascii");
  const Value* indent = arg(args, 1, "indent");
  if (ensure_ascii && truthy(*ensure_ascii))
    throw ValueError("tojson(ensure_ascii=True) is not supported");
  bool has_indent = indent && !indent->is_none();
  std::string unit;
  if (has_indent)
    unit = indent->is_string() ? indent->string()
                               : std::string(std::max<int64_t>(0, indent->integer()), ' ');
  JsonStyle style = default_json_style(has_indent, unit);
  if (const Value* seps = arg(args, 2, "separators");
      seps && seps->is_list() && seps->items().size() == 2) {
    style.item_separator = to_str(seps->items()[0]);
    style.key_separator = to_str(seps->items()[1]);
  }
  if (const Value* sk = arg(args, 3, "sort_keys")) style.sort_keys = truthy(*sk);
  return Value(to_json_text(v, style));
}

Value do_int(const Value& v, const CallArgs& args) {
  const Value* def = arg(args, 0, "default");
  Value fallback = def ? *def : Value(0);
  if (v.is_int() || v.is_bool()) return Value(v.integer());
  if (v.is_float())
    return std::isfinite(v.number()) ? Value(static_cast<int64_t>(v.number())) : fallback;
  if (v.is_string()) {
    std::string s = text::strip(v.string(), true, true, nullptr);
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
    if (s.empty()) return fallback;
    char* end = nullptr;
    long long i = std::strtoll(s.c_str(), &end, 10);
    if (*end == '\0') return Value(static_cast<int64_t>(i));
    double f = std::strtod(s.c_str(), &end);
    if (*end == '\0' && std::isfinite(f)) return Value(static_cast<int64_t>(f));
  }
  return fallback;
}

Value do_float(const Value& v, const CallArgs& args) {
  const Value* def = arg(args, 0, "default");
  Value fallback = def ? *def : Value(0.0);
  if (v.is_number() || v.is_bool()) return Value(v.number());
  if (v.is_string()) {
    std::string s = text::strip(v.string(), true, true, nullptr);
    char* end = nullptr;
    double f = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == '\0') return Value(f);
  }
  return fallback;
}

Value do_indent(const Value& v, const CallArgs& args) {
  const Value* w = arg(args, 0, "width");
  std::string unit = !w               ? "    "
                     : w->is_string() ? w->string()
                                      : std::string(std::max<int64_t>(0, w->integer()), ' ');
  const Value* first = arg(args, 1, "first");
  const Value* blank = arg(args, 2, "blank");
  std::string s = to_str(v) + "\n";
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' || s[i] == '\r') {
      lines.push_back(s.substr(start, i - start));
      if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  if (start < s.size()) lines.push_back(s.substr(start));
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += "\n";
    bool indent_line = i > 0 && (!lines[i].empty() || (blank && truthy(*blank)));
    out += (indent_line ? unit : "") + lines[i];
  }
  if (first && truthy(*first)) out = unit + out;
  return Value(out);
}

const std::map<std::string, Filter>& filters() {
  static const std::map<std::string, Filter> table = [] {
    std::map<std::string, Filter> t;
    auto str_fn = [](std::string (*fn)(std::string_view)) {
      return [fn](Renderer&, const Value& v, const CallArgs&) { return Value(fn(to_str(v))); };
    };
    t["upper"] = str_fn(text::upper);
    t["lower"] = str_fn(text::lower);
    t["title"] = str_fn(text::title);
    t["capitalize"] = str_fn(text::capitalize);
    t["string"] = [](Renderer&, const Value& v, const CallArgs&) { return Value(to_str(v)); };
    t["safe"] = t["string"];
    t["trim"] = [](Renderer&, const Value& v, const CallArgs& a) {
      const Value* chars = arg(a, 0, "chars");
      std::string c = chars && !chars->is_none() ? to_str(*chars) : "";
      return Value(text::strip(to_str(v), true, true, chars && !chars->is_none() ? &c : nullptr));
    };
    t["length"] = [](Renderer&, const Value& v, const CallArgs&) { return Value(length_of(v)); };
    t["count"] = t["length"];
    t["tojson"] = [](Renderer& r, const Value& v, const CallArgs& a) {
      Value out = do_tojson(v, a);
      r.check_size(out.string().size());
      return out;
    };
    t["default"] = [](Renderer&, const Value& v, const CallArgs& a) {
      const Value* def = arg(a, 0, "default_value");
      const Value* boolean = arg(a, 1, "boolean");
      bool use = v.is_undefined() || (boolean && truthy(*boolean) && !truthy(v));
      return use ? (def ? *def : Value("")) : v;
    };
    t["d"] = t["default"];
    add_list_filters(t);  // jinja_list_filters.cpp
    t["replace"] = [](Renderer& r, const Value& v, const CallArgs& a) {
      const Value* from = arg(a, 0, "old");
      const Value* to = arg(a, 1, "new");
      const Value* count = arg(a, 2, "count");
      if (!from || !to) throw ValueError("replace needs old and new");
      std::string out = text::replace(to_str(v), to_str(*from), to_str(*to),
                                      count && !count->is_none() ? count->integer() : -1);
      r.check_size(out.size());
      return Value(out);
    };
    t["abs"] = [](Renderer&, const Value& v, const CallArgs&) {
      if (v.is_float()) return Value(std::fabs(v.number()));
      if (v.is_int() || v.is_bool()) return Value(v.integer() < 0 ? -v.integer() : v.integer());
      throw ValueError("bad operand type for abs(): '" + type_name(v) + "'");
    };
    t["round"] = [](Renderer&, const Value& v, const CallArgs& a) {
      const Value* p = arg(a, 0, "precision");
      const Value* m = arg(a, 1, "method");
      double scale = std::pow(10.0, p ? static_cast<double>(p->integer()) : 0.0);
      std::string method = m ? to_str(*m) : "common";
      double x = v.number() * scale;
      // Python's round() breaks ties to even, as nearbyint does in the default mode.
      x = method == "ceil" ? std::ceil(x) : method == "floor" ? std::floor(x) : std::nearbyint(x);
      return Value(x / scale);
    };
    t["int"] = [](Renderer&, const Value& v, const CallArgs& a) { return do_int(v, a); };
    t["float"] = [](Renderer&, const Value& v, const CallArgs& a) { return do_float(v, a); };
    t["indent"] = [](Renderer&, const Value& v, const CallArgs& a) { return do_indent(v, a); };
    t["attr"] = [](Renderer&, const Value& v, const CallArgs& a) {
      const Value* name = arg(a, 0, "name");
      if (!name) throw ValueError("attr needs a name");
      // Python getattr only: a dict's keys are items, not attributes.
      Value found = get_attribute(v, to_str(*name));
      if (v.is_dict() && !v.is_namespace() && !found.is_callable())
        return Value::undefined("'dict object' has no attribute '" + to_str(*name) + "'");
      return found;
    };
    t["wordcount"] = [](Renderer&, const Value& v, const CallArgs&) {
      return Value(static_cast<int64_t>(text::split(to_str(v), nullptr, -1).size()));
    };
    t["escape"] = [](Renderer&, const Value& v, const CallArgs&) {
      std::string out;
      for (char c : to_str(v)) {
        switch (c) {
          case '&':
            out += "&amp;";
            break;
          case '<':
            out += "&lt;";
            break;
          case '>':
            out += "&gt;";
            break;
          case '"':
            out += "&#34;";
            break;
          case '\'':
            out += "&#39;";
            break;
          default:
            out += c;
        }
      }
      return Value(out);
    };
    t["e"] = t["escape"];
    t["format"] = [](Renderer& r, const Value& v, const CallArgs& a) {
      // Jinja2: fmt|format(*args) is fmt % args.
      std::string out = printf_format(to_str(v), Value::tuple(a.positional));
      r.check_size(out.size());
      return Value(out);
    };
    return t;
  }();
  return table;
}

}  // namespace

bool is_known_filter(const std::string& name) {
  return filters().count(name) > 0;
}

Value apply_filter(Renderer& r, const std::string& name, const Value& v, const CallArgs& args) {
  auto it = filters().find(name);
  if (it == filters().end()) throw ValueError("No filter named '" + name + "'.");
  return it->second(r, v, args);
}

}  // namespace ps::jinja
