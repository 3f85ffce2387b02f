// Attribute and item access, and the Python methods templates call on strings, dicts and
// lists (`content.split('</think>')`, `message.get('name')`, `tools.items()`), as Jinja2's
// sandbox allows them: nothing that mutates a list or dict.
#include <algorithm>

#include "chat/jinja_format.h"
#include "chat/jinja_render.h"
#include "chat/jinja_text.h"

namespace ps::jinja {

namespace {

std::string object_repr(const Value& v) {
  if (v.is_none()) return "None";
  return type_name(v).append(" object");
}

Value no_attribute(const Value& obj, const std::string& name) {
  // Built with append: GCC 12 misreports -Wrestrict on a chain of string operator+ here.
  std::string hint = "'";
  hint.append(object_repr(obj)).append("' has no attribute '").append(name).append("'");
  return Value::undefined(std::move(hint));
}

int64_t int_arg(const CallArgs& a, size_t i, const char* key, int64_t fallback) {
  const Value* v = arg(a, i, key);
  if (!v || v->is_none()) return fallback;
  if (!v->is_int() && !v->is_bool()) throw ValueError(std::string(key) + " must be an integer");
  return v->integer();
}

const std::string* str_arg(const CallArgs& a, size_t i, const char* key) {
  const Value* v = arg(a, i, key);
  if (!v || v->is_none()) return nullptr;
  if (!v->is_string())
    throw ValueError(std::string(key) + " must be a string, not " + type_name(*v));
  return &v->string();
}

Value strings(const std::vector<std::string>& parts) {
  std::vector<Value> out(parts.begin(), parts.end());
  return Value::list(std::move(out));
}

Value string_method(const std::string& s, const std::string& name) {
  auto bind = [&](auto fn) {
    return Value::callable("str." + name,
                           [s, fn](const CallArgs& a, Renderer& r) { return fn(s, a, r); });
  };
  if (name == "startswith" || name == "endswith") {
    bool start = name == "startswith";
    return bind([start](const std::string& s, const CallArgs& a, Renderer&) {
      const Value* p = arg(a, 0, "prefix");
      if (!p) throw ValueError("startswith/endswith need an argument");
      std::vector<Value> options = p->is_tuple() ? p->items() : std::vector<Value>{*p};
      for (const auto& o : options) {
        if (!o.is_string())
          throw ValueError("startswith/endswith need a string or a tuple of strings");
        const std::string& x = o.string();
        if (x.size() <= s.size() && (start ? s.compare(0, x.size(), x) == 0
                                           : s.compare(s.size() - x.size(), x.size(), x) == 0))
          return Value(true);
      }
      return Value(false);
    });
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    bool left = name != "rstrip", right = name != "lstrip";
    return bind([left, right](const std::string& s, const CallArgs& a, Renderer&) {
      return Value(text::strip(s, left, right, str_arg(a, 0, "chars")));
    });
  }
  if (name == "split" || name == "rsplit") {
    bool reverse = name == "rsplit";
    return bind([reverse](const std::string& s, const CallArgs& a, Renderer& r) {
      const std::string* sep = str_arg(a, 0, "sep");
      int64_t max = int_arg(a, 1, "maxsplit", -1);
      auto parts = reverse ? text::rsplit(s, sep, max) : text::split(s, sep, max);
      for (size_t i = 0; i < parts.size(); ++i) r.count_iteration();  // bounds the list built
      return strings(parts);
    });
  }
  if (name == "splitlines") {
    return bind([](const std::string& s, const CallArgs&, Renderer&) {
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
      return strings(lines);
    });
  }
  if (name == "replace") {
    return bind([](const std::string& s, const CallArgs& a, Renderer& r) {
      const std::string* from = str_arg(a, 0, "old");
      const std::string* to = str_arg(a, 1, "new");
      if (!from || !to) throw ValueError("replace needs two strings");
      std::string out = text::replace(s, *from, *to, int_arg(a, 2, "count", -1));
      r.check_size(out.size());
      return Value(out);
    });
  }
  using Mapper = std::string (*)(std::string_view);
  Mapper mapper = name == "upper"        ? text::upper
                  : name == "lower"      ? text::lower
                  : name == "title"      ? text::title
                  : name == "capitalize" ? text::capitalize
                                         : nullptr;
  if (mapper)
    return bind(
        [mapper](const std::string& s, const CallArgs&, Renderer&) { return Value(mapper(s)); });
  if (name == "find" || name == "rfind" || name == "count" || name == "index") {
    std::string which = name;
    return bind([which](const std::string& s, const CallArgs& a, Renderer&) {
      const std::string* sub = str_arg(a, 0, "sub");
      if (!sub) throw ValueError(which + " needs a string");
      if (which == "count") {
        if (sub->empty()) return Value(static_cast<int64_t>(text::length(s) + 1));
        int64_t n = 0;
        for (size_t at = s.find(*sub); at != std::string::npos; at = s.find(*sub, at + sub->size()))
          ++n;
        return Value(n);
      }
      size_t at = which == "rfind" ? s.rfind(*sub) : s.find(*sub);
      if (at == std::string::npos) {
        if (which == "index") throw ValueError("substring not found");
        return Value(static_cast<int64_t>(-1));
      }
      return Value(static_cast<int64_t>(text::length(std::string_view(s).substr(0, at))));
    });
  }
  if (name == "format") {
    return bind([](const std::string& s, const CallArgs& a, Renderer& r) {
      std::string out = brace_format(s, a);
      r.check_size(out.size());
      return Value(out);
    });
  }
  if (name == "join") {
    return bind([](const std::string& s, const CallArgs& a, Renderer& r) {
      const Value* items = arg(a, 0, "iterable");
      if (!items) throw ValueError("join needs an iterable");
      std::string out;
      bool first = true;
      for (const auto& x : iterate(*items)) {
        if (!x.is_string())
          throw ValueError("sequence item: expected str instance, " + type_name(x) + " found");
        if (!first) out += s;
        first = false;
        out += x.string();
        r.check_size(out.size());
      }
      return Value(out);
    });
  }
  auto predicate = [&](bool (*fn)(unsigned char)) {
    return bind([fn](const std::string& s, const CallArgs&, Renderer&) {
      return Value(!s.empty() && std::all_of(s.begin(), s.end(), [fn](char c) {
        return fn(static_cast<unsigned char>(c));
      }));
    });
  };
  if (name == "isdigit") return predicate([](unsigned char c) { return std::isdigit(c) != 0; });
  if (name == "isalpha") return predicate([](unsigned char c) { return std::isalpha(c) != 0; });
  if (name == "isalnum") return predicate([](unsigned char c) { return std::isalnum(c) != 0; });
  if (name == "isspace") return predicate([](unsigned char c) { return std::isspace(c) != 0; });
  return Value();
}

Value dict_method(const Value& d, const std::string& name) {
  if (name == "items" || name == "keys" || name == "values") {
    return Value::callable("dict." + name, [d, name](const CallArgs&, Renderer&) {
      std::vector<Value> out;
      for (const auto& [k, v] : d.dict_data().items)
        out.push_back(name == "items" ? Value::tuple({k, v}) : name == "keys" ? k : v);
      return Value::list(std::move(out));
    });
  }
  if (name == "get") {
    return Value::callable("dict.get", [d](const CallArgs& a, Renderer&) {
      const Value* key = arg(a, 0, "key");
      if (!key) throw ValueError("get needs a key");
      const Value* found = d.dict_data().find(*key);
      if (found) return *found;
      const Value* def = arg(a, 1, "default");
      return def ? *def : Value::none();
    });
  }
  static const char* mutators[] = {"pop", "popitem", "setdefault", "update", "clear"};
  for (const char* m : mutators)
    if (name == m)
      return Value::callable("dict." + name, [name](const CallArgs&, Renderer&) -> Value {
        throw ValueError("access to attribute '" + name + "' of 'dict' object is unsafe.");
      });
  return Value();
}

Value list_method(const Value& l, const std::string& name) {
  if (name == "index" || name == "count") {
    return Value::callable("list." + name, [l, name](const CallArgs& a, Renderer&) {
      const Value* x = arg(a, 0, "value");
      if (!x) throw ValueError(name + " needs an argument");
      int64_t n = 0;
      for (size_t i = 0; i < l.items().size(); ++i) {
        if (!equals(l.items()[i], *x)) continue;
        if (name == "index") return Value(static_cast<int64_t>(i));
        ++n;
      }
      if (name == "index") throw ValueError("value is not in list");
      return Value(n);
    });
  }
  static const char* mutators[] = {"append", "extend", "insert",  "pop",
                                   "remove", "sort",   "reverse", "clear"};
  for (const char* m : mutators)
    if (name == m)
      return Value::callable("list." + name, [name](const CallArgs&, Renderer&) -> Value {
        throw ValueError("access to attribute '" + name + "' of 'list' object is unsafe.");
      });
  return Value();
}

}  // namespace

Value get_attribute(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (obj.is_namespace()) {
    const Value* v = obj.dict_data().find(name);
    return v ? *v : no_attribute(obj, name);
  }
  Value method;
  if (obj.is_string()) method = string_method(obj.string(), name);
  if (obj.is_dict()) method = dict_method(obj, name);
  if (obj.is_list() && !obj.is_tuple()) method = list_method(obj, name);
  if (method.is_callable()) return method;
  if (obj.is_dict()) {
    const Value* v = obj.dict_data().find(name);
    if (v) return *v;
  }
  return no_attribute(obj, name);
}

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) fail_undefined(obj);
  if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    std::vector<uint32_t> cps;
    if (obj.is_string()) cps = text::decode(obj.string());
    int64_t n =
        obj.is_list() ? static_cast<int64_t>(obj.items().size()) : static_cast<int64_t>(cps.size());
    int64_t i = key.integer() < 0 ? key.integer() + n : key.integer();
    if (i < 0 || i >= n)
      return Value::undefined(object_repr(obj) + " has no element " + to_str(key));
    if (obj.is_list()) return obj.items()[static_cast<size_t>(i)];
    return Value(text::encode(cps, static_cast<size_t>(i), static_cast<size_t>(i) + 1));
  }
  if (obj.is_dict()) {
    const Value* v = obj.dict_data().find(key);
    if (v) return *v;
  }
  if (key.is_string()) return get_attribute(obj, key.string());
  return Value::undefined(object_repr(obj) + " has no element " + to_repr(key));
}

Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  if (!obj.is_list() && !obj.is_string())
    throw ValueError("'" + type_name(obj) + "' object is not subscriptable");
  auto as_int = [](const Value& v, const char* what) {
    if (!v.is_int() && !v.is_bool())
      throw ValueError(std::string("slice ") + what + " must be an integer or None");
    return v.integer();
  };
  int64_t st = step.is_none() ? 1 : as_int(step, "step");
  if (st == 0) throw ValueError("slice step cannot be zero");
  std::vector<uint32_t> cps;
  if (obj.is_string()) cps = text::decode(obj.string());
  int64_t n =
      obj.is_list() ? static_cast<int64_t>(obj.items().size()) : static_cast<int64_t>(cps.size());
  auto clamp = [&](const Value& v, int64_t if_none) {
    if (v.is_none()) return if_none;
    int64_t i = as_int(v, "index");
    if (i < 0) i += n;
    if (st > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  int64_t b = clamp(start, st > 0 ? 0 : n - 1);
  int64_t e = clamp(stop, st > 0 ? n : -1);
  std::vector<Value> items;
  std::string out;
  for (int64_t i = b; st > 0 ? i < e : i > e; i += st) {
    if (obj.is_list())
      items.push_back(obj.items()[static_cast<size_t>(i)]);
    else
      text::append_utf8(out, cps[static_cast<size_t>(i)]);
  }
  if (obj.is_string()) return Value(out);
  return obj.is_tuple() ? Value::tuple(std::move(items)) : Value::list(std::move(items));
}

std::vector<Value> iterate(const Value& v) {
  if (v.is_list()) return v.items();
  if (v.is_undefined()) return {};
  if (v.is_dict() && !v.is_namespace()) {
    std::vector<Value> keys;
    for (const auto& [k, x] : v.dict_data().items) keys.push_back(k);
    return keys;
  }
  if (v.is_string()) {
    // One Value per character is ~100 bytes each; no chat template iterates a megabyte string.
    if (v.string().size() > (1u << 20)) throw ValueError("string too long to iterate (over 1 MiB)");
    std::vector<Value> chars;
    auto cps = text::decode(v.string());
    for (size_t i = 0; i < cps.size(); ++i) chars.emplace_back(text::encode(cps, i, i + 1));
    return chars;
  }
  throw ValueError("'" + type_name(v) + "' object is not iterable");
}

}  // namespace ps::jinja
