// Jinja2's builtin filters that chat templates use, plus transformers' tojson.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

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

using Filter = std::function<Value(Renderer&, const Value&, const CallArgs&)>;

int64_t length_of(const Value& v) {
  if (v.is_string()) return static_cast<int64_t>(text::length(v.string()));
  if (v.is_list()) return static_cast<int64_t>(v.items().size());
  if (v.is_dict()) return static_cast<int64_t>(v.dict_data().items.size());
  if (v.is_undefined()) return 0;
  throw ValueError("object of type '" + type_name(v) + "' has no len()");
}

// Jinja2's attribute= argument: "a.b" walks nested items.
Value attribute_path(const Value& item, const Value& path) {
  if (path.is_int()) return get_item(item, path);
  Value cur = item;
  const std::string dot = ".";
  for (const auto& part : text::split(to_str(path), &dot, -1)) {
    if (cur.is_undefined()) return cur;
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
    cur = digits ? get_item(cur, Value(static_cast<int64_t>(std::atoll(part.c_str()))))
                 : get_item(cur, Value(part));
  }
  return cur;
}

// Sorting and min/max ignore case unless case_sensitive=True, as Jinja2 does.
Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(text::lower(v.string()));
  return v;
}

std::vector<Value> select_items(Renderer& r, const Value& v, const CallArgs& args, bool by_attr,
                                bool keep) {
  std::vector<Value> out;
  size_t test_at = by_attr ? 1 : 0;
  const Value* attr = by_attr ? arg(args, 0, "attribute") : nullptr;
  if (by_attr && !attr) throw ValueError("selectattr/rejectattr need an attribute name");
  CallArgs test_args;
  for (size_t i = test_at + 1; i < args.positional.size(); ++i)
    test_args.positional.push_back(args.positional[i]);
  for (const auto& item : iterate(v)) {
    Value subject = by_attr ? attribute_path(item, *attr) : item;
    bool passed = test_at < args.positional.size()
                      ? apply_test(r, to_str(args.positional[test_at]), subject, test_args)
                      : truthy(subject);
    if (passed == keep) out.push_back(item);
  }
  return out;
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

Value sorted(Renderer& r, const Value& v, const CallArgs& args) {
  const Value* reverse = arg(args, 0, "reverse");
  const Value* cs = arg(args, 1, "case_sensitive");
  const Value* attr = arg(args, 2, "attribute");
  bool case_sensitive = cs && truthy(*cs);
  std::vector<Value> items = iterate(v);
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& item : items) {
    r.count_iteration();
    keyed.emplace_back(sort_key(attr ? attribute_path(item, *attr) : item, case_sensitive), item);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return less_than(a.first, b.first); });
  if (reverse && truthy(*reverse)) std::reverse(keyed.begin(), keyed.end());
  std::vector<Value> out;
  for (auto& [k, item] : keyed) out.push_back(item);
  return Value::list(std::move(out));
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
    t["join"] = [](Renderer& r, const Value& v, const CallArgs& a) {
      const Value* sep = arg(a, 0, "d");
      const Value* attr = arg(a, 1, "attribute");
      std::string out, s = sep ? to_str(*sep) : "";
      bool first = true;
      for (const auto& item : iterate(v)) {
        if (!first) out += s;
        first = false;
        out += to_str(attr ? attribute_path(item, *attr) : item);
        r.check_size(out.size());
      }
      return Value(out);
    };
    t["first"] = [](Renderer&, const Value& v, const CallArgs&) {
      auto items = iterate(v);
      return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
    };
    t["last"] = [](Renderer&, const Value& v, const CallArgs&) {
      auto items = iterate(v);
      return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
    };
    t["list"] = [](Renderer&, const Value& v, const CallArgs&) { return Value::list(iterate(v)); };
    t["items"] = [](Renderer&, const Value& v, const CallArgs&) {
      if (v.is_undefined()) return Value::list({});
      if (!v.is_dict()) throw ValueError("can only get item pairs from a mapping.");
      std::vector<Value> out;
      for (const auto& [k, x] : v.dict_data().items) out.push_back(Value::tuple({k, x}));
      return Value::list(std::move(out));
    };
    t["dictsort"] = [](Renderer&, const Value& v, const CallArgs& a) {
      if (!v.is_dict()) throw ValueError("dictsort needs a mapping");
      const Value* cs = arg(a, 0, "case_sensitive");
      std::vector<std::pair<Value, Value>> items(v.dict_data().items);
      std::stable_sort(items.begin(), items.end(), [&](const auto& x, const auto& y) {
        return less_than(sort_key(x.first, cs && truthy(*cs)),
                         sort_key(y.first, cs && truthy(*cs)));
      });
      std::vector<Value> out;
      for (auto& [k, x] : items) out.push_back(Value::tuple({k, x}));
      return Value::list(std::move(out));
    };
    t["map"] = [](Renderer& r, const Value& v, const CallArgs& a) {
      std::vector<Value> out;
      const Value* attr = arg(a, 100, "attribute");
      const Value* def = arg(a, 100, "default");
      for (const auto& item : iterate(v)) {
        if (attr) {
          Value x = attribute_path(item, *attr);
          out.push_back(x.is_undefined() && def ? *def : x);
        } else {
          if (a.positional.empty()) throw ValueError("map needs a filter name or attribute=");
          CallArgs rest;
          rest.positional.assign(a.positional.begin() + 1, a.positional.end());
          rest.keyword = a.keyword;
          out.push_back(apply_filter(r, to_str(a.positional[0]), item, rest));
        }
      }
      return Value::list(std::move(out));
    };
    t["select"] = [](Renderer& r, const Value& v, const CallArgs& a) {
      return Value::list(select_items(r, v, a, false, true));
    };
    t["reject"] = [](Renderer& r, const Value& v, const CallArgs& a) {
      return Value::list(select_items(r, v, a, false, false));
    };
    t["selectattr"] = [](Renderer& r, const Value& v, const CallArgs& a) {
      return Value::list(select_items(r, v, a, true, true));
    };
    t["rejectattr"] = [](Renderer& r, const Value& v, const CallArgs& a) {
      return Value::list(select_items(r, v, a, true, false));
    };
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
    t["reverse"] = [](Renderer&, const Value& v, const CallArgs&) {
      if (v.is_string()) {
        auto cps = text::decode(v.string());
        std::reverse(cps.begin(), cps.end());
        return Value(text::encode(cps, 0, cps.size()));
      }
      auto items = iterate(v);
      std::reverse(items.begin(), items.end());
      return Value::list(std::move(items));
    };
    t["sort"] = sorted;
    t["unique"] = [](Renderer&, const Value& v, const CallArgs& a) {
      const Value* cs = arg(a, 0, "case_sensitive");
      std::vector<Value> out, seen;
      for (const auto& item : iterate(v)) {
        Value key = sort_key(item, cs && truthy(*cs));
        if (std::none_of(seen.begin(), seen.end(),
                         [&](const Value& s) { return equals(s, key); })) {
          seen.push_back(key);
          out.push_back(item);
        }
      }
      return Value::list(std::move(out));
    };
    auto extreme = [](bool want_max) {
      return [want_max](Renderer&, const Value& v, const CallArgs& a) {
        const Value* cs = arg(a, 0, "case_sensitive");
        const Value* attr = arg(a, 1, "attribute");
        auto items = iterate(v);
        if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
        size_t best = 0;
        for (size_t i = 1; i < items.size(); ++i) {
          Value x = sort_key(attr ? attribute_path(items[i], *attr) : items[i], cs && truthy(*cs));
          Value b =
              sort_key(attr ? attribute_path(items[best], *attr) : items[best], cs && truthy(*cs));
          if (want_max ? less_than(b, x) : less_than(x, b)) best = i;
        }
        return items[best];
      };
    };
    t["max"] = extreme(true);
    t["min"] = extreme(false);
    t["sum"] = [](Renderer&, const Value& v, const CallArgs& a) {
      const Value* attr = arg(a, 0, "attribute");
      const Value* start = arg(a, 1, "start");
      Value total = start ? *start : Value(0);
      for (const auto& item : iterate(v)) {
        Value x = attr ? attribute_path(item, *attr) : item;
        if (!(x.is_number() || x.is_bool()) || !(total.is_number() || total.is_bool()))
          throw ValueError("sum needs numbers");
        total = total.is_float() || x.is_float() ? Value(total.number() + x.number())
                                                 : Value(total.integer() + x.integer());
      }
      return total;
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
