// The names every template sees: Jinja2's range/namespace/dict, and transformers'
// raise_exception and strftime_now.
#include <ctime>

#include "chat/jinja_render.h"

namespace ps::jinja {

void add_globals(Frame& g) {
  g["range"] = Value::callable("range", [](const CallArgs& a, Renderer& r) {
    for (const auto& x : a.positional)
      if (!x.is_int() && !x.is_bool())
        throw ValueError("'" + type_name(x) + "' object cannot be interpreted as an integer");
    int64_t start = 0, stop = 0, step = 1;
    if (a.positional.size() == 1) {
      stop = a.positional[0].integer();
    } else if (a.positional.size() == 2 || a.positional.size() == 3) {
      start = a.positional[0].integer();
      stop = a.positional[1].integer();
      if (a.positional.size() == 3) step = a.positional[2].integer();
    } else {
      throw ValueError("range expected 1 to 3 arguments");
    }
    if (step == 0) throw ValueError("range() arg 3 must not be zero");
    std::vector<Value> items;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      r.count_iteration();
      items.emplace_back(i);
    }
    return Value::list(std::move(items));
  });
  auto make_dict = [](bool ns) {
    return [ns](const CallArgs& a, Renderer&) {
      Value d = ns ? Value::namespace_object() : Value::dict();
      for (const auto& p : a.positional) {
        if (!p.is_dict())
          throw ValueError("namespace()/dict() take a mapping or keyword arguments");
        for (const auto& [k, v] : p.dict_data().items) d.dict_data().set(k, v);
      }
      for (const auto& [k, v] : a.keyword) d.dict_data().set(Value(k), v);
      return d;
    };
  };
  g["namespace"] = Value::callable("namespace", make_dict(true));
  g["dict"] = Value::callable("dict", make_dict(false));
  g["raise_exception"] =
      Value::callable("raise_exception", [](const CallArgs& a, Renderer&) -> Value {
        throw ValueError(a.positional.empty() ? "raise_exception() called"
                                              : to_str(a.positional[0]));
      });
  g["strftime_now"] = Value::callable("strftime_now", [](const CallArgs& a, Renderer&) {
    if (a.positional.empty() || !a.positional[0].is_string())
      throw ValueError("strftime_now needs a format string");
    std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char buf[256];
    size_t n = std::strftime(buf, sizeof buf, a.positional[0].string().c_str(), &local);
    return Value(std::string(buf, n));
  });
}

}  // namespace ps::jinja
