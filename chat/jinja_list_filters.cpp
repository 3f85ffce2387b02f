// Jinja2's builtin filters over sequences and mappings that chat templates use: join, first,
// last, list, items, dictsort, map, select/reject(attr), reverse, sort, unique, max, min, sum,
// with the attribute= paths and case-folding they share. Split from jinja_filters.cpp, which
// holds the filter table and the string and number filters.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_filters_internal.h"
#include "chat/jinja_render.h"
#include "chat/jinja_text.h"

namespace ps::jinja {
namespace {

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

}  // namespace

void add_list_filters(std::map<std::string, Filter>& t) {
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
      return less_than(sort_key(x.first, cs && truthy(*cs)), sort_key(y.first, cs && truthy(*cs)));
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
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) {
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
}

}  // namespace ps::jinja
