// Expression evaluation with Python's operator semantics.
#include <cmath>

#include "chat/jinja_format.h"
#include "chat/jinja_render.h"
#include "chat/jinja_text.h"

namespace ps::jinja {

void fail_undefined(const Value& v) {
  throw ValueError(v.undefined_hint().empty() ? "value is undefined" : v.undefined_hint());
}

Value Renderer::lookup(const std::string& name) const {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    auto found = (*it)->find(name);
    if (found != (*it)->end()) return found->second;
  }
  auto g = globals_.find(name);
  if (g != globals_.end()) return g->second;
  return Value::undefined("'" + name + "' is undefined");
}

void Renderer::assign(const std::string& name, Value v) {
  (*frames_.back())[name] = std::move(v);
}

Value Renderer::eval(const Expr& e) {
  try {
    return eval_inner(e);
  } catch (const ValueError& err) {
    throw TemplateError(e.line, e.column, err.what());
  } catch (const std::invalid_argument& err) {
    throw TemplateError(e.line, e.column, err.what());
  }
}

CallArgs Renderer::eval_args(const Expr& e, size_t first_child) {
  CallArgs args;
  for (size_t i = first_child; i < e.children.size(); ++i)
    args.positional.push_back(eval(*e.children[i]));
  for (const auto& [key, value] : e.keyword) {
    Value v = eval(*value);
    if (key == "*") {
      for (auto& x : iterate(v)) args.positional.push_back(std::move(x));
    } else if (key == "**") {
      if (!v.is_dict())
        throw TemplateError(e.line, e.column, "argument after ** must be a mapping");
      for (const auto& [k, x] : v.dict_data().items) args.keyword.emplace_back(to_str(k), x);
    } else {
      args.keyword.emplace_back(key, std::move(v));
    }
  }
  return args;
}

Value Renderer::call(const Value& fn, const CallArgs& args) {
  if (fn.is_undefined()) fail_undefined(fn);
  if (!fn.is_callable()) throw ValueError("'" + type_name(fn) + "' object is not callable");
  return fn.function()(args, *this);
}

Value Renderer::eval_inner(const Expr& e) {
  switch (e.type) {
    case Expr::Type::kLiteral:
      return e.value;
    case Expr::Type::kName:
      return lookup(e.name);
    case Expr::Type::kList:
    case Expr::Type::kTuple: {
      std::vector<Value> items;
      for (const auto& c : e.children) items.push_back(eval(*c));
      return e.type == Expr::Type::kList ? Value::list(std::move(items))
                                         : Value::tuple(std::move(items));
    }
    case Expr::Type::kDict: {
      Value d = Value::dict();
      for (size_t i = 0; i + 1 < e.children.size(); i += 2)
        d.dict_data().set(eval(*e.children[i]), eval(*e.children[i + 1]));
      return d;
    }
    case Expr::Type::kAttribute: {
      Value obj = eval(*e.children[0]);
      if (obj.is_undefined()) fail_undefined(obj);
      return get_attribute(obj, e.name);
    }
    case Expr::Type::kSubscript: {
      Value obj = eval(*e.children[0]);
      if (obj.is_undefined()) fail_undefined(obj);
      return get_item(obj, eval(*e.children[1]));
    }
    case Expr::Type::kSlice: {
      Value obj = eval(*e.children[0]);
      if (obj.is_undefined()) fail_undefined(obj);
      auto part = [&](size_t i) { return e.children[i] ? eval(*e.children[i]) : Value::none(); };
      return get_slice(obj, part(1), part(2), part(3));
    }
    case Expr::Type::kCall: {
      Value fn = eval(*e.children[0]);
      return call(fn, eval_args(e, 1));
    }
    case Expr::Type::kFilter:
      return eval_filter(e);
    case Expr::Type::kTest:
      return eval_test(e);
    case Expr::Type::kUnary: {
      Value v = eval(*e.children[0]);
      if (e.name == "not") return Value(!truthy(v));
      if (v.is_undefined()) fail_undefined(v);
      if (v.is_float()) return Value(e.name == "-" ? -v.number() : v.number());
      if (v.is_int() || v.is_bool()) return Value(e.name == "-" ? -v.integer() : v.integer());
      throw ValueError("bad operand type for unary " + e.name + ": '" + type_name(v) + "'");
    }
    case Expr::Type::kBinary:
      return eval_binary(e);
    case Expr::Type::kCondition: {
      if (truthy(eval(*e.children[0]))) return eval(*e.children[1]);
      if (e.children[2]) return eval(*e.children[2]);
      return Value::undefined("the inline if-expression on line " + std::to_string(e.line) +
                              " evaluated to false and no else section was defined.");
    }
  }
  return Value();
}

Value Renderer::eval_filter(const Expr& e) {
  Value v = eval(*e.children[0]);
  CallArgs args = eval_args(e, 1);
  return apply_filter(*this, e.name, v, args);
}

Value Renderer::eval_test(const Expr& e) {
  Value v = eval(*e.children[0]);
  CallArgs args = eval_args(e, 1);
  bool result = apply_test(*this, e.name, v, args);
  return Value(e.negated ? !result : result);
}

static bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string())
      throw ValueError("'in <string>' requires string as left operand, not " + type_name(item));
    return container.string().find(item.string()) != std::string::npos;
  }
  if (container.is_list()) {
    for (const auto& x : container.items())
      if (equals(x, item)) return true;
    return false;
  }
  if (container.is_dict()) return container.dict_data().find(item) != nullptr;
  if (container.is_undefined()) return false;  // Undefined iterates as empty
  throw ValueError("argument of type '" + type_name(container) + "' is not iterable");
}

static bool numeric(const Value& v) {
  return v.is_number() || v.is_bool();
}

static Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  auto unsupported = [&]() -> Value {
    throw ValueError("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" +
                     type_name(b) + "'");
  };
  if (!numeric(a) || !numeric(b)) return unsupported();
  bool as_float = a.is_float() || b.is_float();
  if (op == "/") {
    if (b.number() == 0) throw ValueError("division by zero");
    return Value(a.number() / b.number());
  }
  if (as_float) {
    double x = a.number(), y = b.number();
    if (op == "+") return Value(x + y);
    if (op == "-") return Value(x - y);
    if (op == "*") return Value(x * y);
    if (op == "**") return Value(std::pow(x, y));
    if (y == 0) throw ValueError("float division by zero");
    if (op == "//") return Value(std::floor(x / y));
    double m = std::fmod(x, y);
    if (m != 0 && ((m < 0) != (y < 0))) m += y;
    return Value(m);
  }
  int64_t x = a.integer(), y = b.integer(), r = 0;
  if (op == "+" && !__builtin_add_overflow(x, y, &r)) return Value(r);
  if (op == "-" && !__builtin_sub_overflow(x, y, &r)) return Value(r);
  if (op == "*" && !__builtin_mul_overflow(x, y, &r)) return Value(r);
  if (op == "+" || op == "-" || op == "*") throw ValueError("integer overflow in " + op);
  if (op == "**") {
    if (y < 0) return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
    int64_t result = 1;
    for (int64_t i = 0; i < y; ++i)
      if (__builtin_mul_overflow(result, x, &result)) throw ValueError("integer overflow in **");
    return Value(result);
  }
  if (y == 0) throw ValueError("integer division or modulo by zero");
  int64_t q = x / y, m = x % y;
  if (m != 0 && ((m < 0) != (y < 0))) {
    --q;
    m += y;
  }
  return Value(op == "//" ? q : m);
}

Value Renderer::eval_binary(const Expr& e) {
  const std::string& op = e.name;
  if (op == "and") {
    Value a = eval(*e.children[0]);
    return truthy(a) ? eval(*e.children[1]) : a;
  }
  if (op == "or") {
    Value a = eval(*e.children[0]);
    return truthy(a) ? a : eval(*e.children[1]);
  }
  Value a = eval(*e.children[0]);
  Value b = eval(*e.children[1]);
  if (op == "~") {
    std::string s = to_str(a) + to_str(b);
    check_size(s.size());
    return Value(std::move(s));
  }
  if (op == "==") return Value(equals(a, b));
  if (op == "!=") return Value(!equals(a, b));
  if (op == "in") return Value(contains(b, a));
  if (op == "not in") return Value(!contains(b, a));
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (op == "<") return Value(less_than(a, b));
  if (op == ">") return Value(less_than(b, a));
  if (op == "<=") return Value(!less_than(b, a));
  if (op == ">=") return Value(!less_than(a, b));
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      check_size(a.string().size() + b.string().size());
      return Value(a.string() + b.string());
    }
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
      std::vector<Value> items = a.items();
      items.insert(items.end(), b.items().begin(), b.items().end());
      check_size(items.size());
      return a.is_tuple() ? Value::tuple(std::move(items)) : Value::list(std::move(items));
    }
    if (a.is_string() != b.is_string() && (a.is_string() || b.is_string()))
      throw ValueError(a.is_string()
                           ? "can only concatenate str (not \"" + type_name(b) + "\") to str"
                           : "unsupported operand type(s) for +: '" + type_name(a) + "' and 'str'");
  }
  if (op == "*" && (a.is_string() || a.is_list() || b.is_string() || b.is_list())) {
    const Value& seq = a.is_string() || a.is_list() ? a : b;
    const Value& count = &seq == &a ? b : a;
    if (!count.is_int() && !count.is_bool())
      throw ValueError("can't multiply sequence by non-int of type '" + type_name(count) + "'");
    int64_t n = std::max<int64_t>(0, count.integer());
    size_t unit = seq.is_string() ? seq.string().size() : seq.items().size();
    if (unit && static_cast<uint64_t>(n) > limits_.max_output_bytes / unit)
      check_size(limits_.max_output_bytes + 1);
    if (seq.is_string()) {
      std::string s;
      for (int64_t i = 0; i < n; ++i) s += seq.string();
      return Value(std::move(s));
    }
    std::vector<Value> items;
    for (int64_t i = 0; i < n; ++i)
      items.insert(items.end(), seq.items().begin(), seq.items().end());
    return seq.is_tuple() ? Value::tuple(std::move(items)) : Value::list(std::move(items));
  }
  if (op == "%" && a.is_string()) {
    std::string out = printf_format(a.string(), b);
    check_size(out.size());
    return Value(std::move(out));
  }
  return arithmetic(op, a, b);
}

}  // namespace ps::jinja
