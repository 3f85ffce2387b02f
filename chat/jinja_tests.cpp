// Jinja2's builtin tests (`x is defined`, `x is string`, `x is divisibleby(3)`, ...).
#include <functional>
#include <map>

#include "chat/jinja_render.h"

namespace ps::jinja {

namespace {

using Test = std::function<bool(const Value&, const CallArgs&)>;

const Value& operand(const CallArgs& a, const char* test) {
  if (a.positional.empty())
    throw ValueError(std::string("the '") + test + "' test needs an argument");
  return a.positional[0];
}

bool has_case(const std::string& s, bool want_upper) {
  bool cased = false;
  for (char c : s) {
    if (std::islower(static_cast<unsigned char>(c))) {
      if (want_upper) return false;
      cased = true;
    } else if (std::isupper(static_cast<unsigned char>(c))) {
      if (!want_upper) return false;
      cased = true;
    }
  }
  return cased;
}

const std::map<std::string, Test>& tests() {
  static const std::map<std::string, Test> table = [] {
    std::map<std::string, Test> t;
    t["defined"] = [](const Value& v, const CallArgs&) { return !v.is_undefined(); };
    t["undefined"] = [](const Value& v, const CallArgs&) { return v.is_undefined(); };
    t["none"] = [](const Value& v, const CallArgs&) { return v.is_none(); };
    t["boolean"] = [](const Value& v, const CallArgs&) { return v.is_bool(); };
    t["true"] = [](const Value& v, const CallArgs&) { return v.is_bool() && v.boolean(); };
    t["false"] = [](const Value& v, const CallArgs&) { return v.is_bool() && !v.boolean(); };
    t["integer"] = [](const Value& v, const CallArgs&) { return v.is_int(); };
    t["float"] = [](const Value& v, const CallArgs&) { return v.is_float(); };
    t["number"] = [](const Value& v, const CallArgs&) { return v.is_number() || v.is_bool(); };
    t["string"] = [](const Value& v, const CallArgs&) { return v.is_string(); };
    t["mapping"] = [](const Value& v, const CallArgs&) { return v.is_dict() && !v.is_namespace(); };
    // Undefined iterates (as empty) and has len() and [] in Jinja2, so it passes these two.
    t["iterable"] = [](const Value& v, const CallArgs&) {
      return v.is_list() || v.is_string() || (v.is_dict() && !v.is_namespace()) || v.is_undefined();
    };
    t["sequence"] = t["iterable"];
    t["callable"] = [](const Value& v, const CallArgs&) { return v.is_callable(); };
    t["escaped"] = [](const Value&, const CallArgs&) { return false; };
    t["sameas"] = [](const Value& v, const CallArgs& a) {
      const Value& o = operand(a, "sameas");
      if (v.is_none() || v.is_bool() || v.is_undefined())
        return v.kind() == o.kind() && equals(v, o);
      if (v.is_list() || v.is_dict())
        return v.kind() == o.kind() && equals(v, o) && to_str(v) == to_str(o);
      return v.kind() == o.kind() && equals(v, o);
    };
    auto eq = [](const Value& v, const CallArgs& a) { return equals(v, operand(a, "eq")); };
    t["eq"] = t["equalto"] = t["=="] = eq;
    t["ne"] =
        t["!="] = [](const Value& v, const CallArgs& a) { return !equals(v, operand(a, "ne")); };
    t["lt"] = t["lessthan"] =
        t["<"] = [](const Value& v, const CallArgs& a) { return less_than(v, operand(a, "lt")); };
    t["gt"] = t["greaterthan"] =
        t[">"] = [](const Value& v, const CallArgs& a) { return less_than(operand(a, "gt"), v); };
    t["le"] =
        t["<="] = [](const Value& v, const CallArgs& a) { return !less_than(operand(a, "le"), v); };
    t["ge"] =
        t[">="] = [](const Value& v, const CallArgs& a) { return !less_than(v, operand(a, "ge")); };
    t["in"] = [](const Value& v, const CallArgs& a) {
      const Value& c = operand(a, "in");
      if (c.is_string()) return v.is_string() && c.string().find(v.string()) != std::string::npos;
      if (c.is_dict()) return c.dict_data().find(v) != nullptr;
      for (const auto& x : iterate(c))
        if (equals(x, v)) return true;
      return false;
    };
    t["divisibleby"] = [](const Value& v, const CallArgs& a) {
      const Value& n = operand(a, "divisibleby");
      if (!n.is_int() || n.integer() == 0) throw ValueError("divisibleby needs a non-zero integer");
      return v.integer() % n.integer() == 0;
    };
    t["even"] = [](const Value& v, const CallArgs&) { return v.is_int() && v.integer() % 2 == 0; };
    t["odd"] = [](const Value& v, const CallArgs&) { return v.is_int() && v.integer() % 2 != 0; };
    t["lower"] = [](const Value& v, const CallArgs&) {
      return v.is_string() && has_case(v.string(), false);
    };
    t["upper"] = [](const Value& v, const CallArgs&) {
      return v.is_string() && has_case(v.string(), true);
    };
    t["filter"] = [](const Value& v, const CallArgs&) {
      return v.is_string() && is_known_filter(v.string());
    };
    t["test"] = [](const Value& v, const CallArgs&) {
      return v.is_string() && is_known_test(v.string());
    };
    return t;
  }();
  return table;
}

}  // namespace

bool is_known_test(const std::string& name) {
  return tests().count(name) > 0;
}

bool apply_test(Renderer&, const std::string& name, const Value& v, const CallArgs& args) {
  auto it = tests().find(name);
  if (it == tests().end()) throw ValueError("No test named '" + name + "'.");
  return it->second(v, args);
}

}  // namespace ps::jinja
