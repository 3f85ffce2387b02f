#pragma once
// The values a chat template computes with, modelled on the Python objects Jinja2 sees when
// transformers renders a template: JSON's dict/list/str/int/float/bool/None, plus tuples,
// namespace() objects, callables (macros, builtins, bound methods) and Jinja2's Undefined.
// Printing, comparing and truthiness follow Python, because the output must be byte-identical
// to Jinja2's.
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ps::jinja {

class Value;
class Renderer;

// An error inside a filter, method or operator; the renderer adds the template position.
struct ValueError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

using NativeFunction = std::function<Value(const CallArgs&, Renderer&)>;

// Insertion-ordered, like a Python dict (tool schemas are printed in the order they arrived).
struct DictData {
  std::vector<std::pair<Value, Value>> items;
  const Value* find(const Value& key) const;
  const Value* find(const std::string& key) const;
  void set(Value key, Value value);
};

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable };

  Value() = default;  // undefined, with no name
  Value(bool b) : kind_(Kind::kBool), int_(b) {}
  Value(int i) : kind_(Kind::kInt), int_(i) {}
  Value(int64_t i) : kind_(Kind::kInt), int_(i) {}
  Value(double f) : kind_(Kind::kFloat), float_(f) {}
  Value(std::string s) : kind_(Kind::kString), str_(std::move(s)) {}
  Value(const char* s) : kind_(Kind::kString), str_(s) {}

  // `hint` is the message Jinja2 would give when the value is used: "'foo' is undefined".
  static Value undefined(std::string hint);
  static Value none();
  static Value list(std::vector<Value> items);
  static Value tuple(std::vector<Value> items);
  static Value dict();
  static Value namespace_object();
  static Value callable(std::string name, NativeFunction fn);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_callable() const { return kind_ == Kind::kCallable; }
  bool is_tuple() const { return kind_ == Kind::kList && tuple_; }
  bool is_namespace() const { return kind_ == Kind::kDict && namespace_; }

  bool boolean() const { return int_ != 0; }
  int64_t integer() const { return int_; }
  double number() const { return kind_ == Kind::kFloat ? float_ : static_cast<double>(int_); }
  const std::string& string() const { return str_; }
  const std::string& undefined_hint() const { return str_; }
  const std::vector<Value>& items() const { return *list_; }
  DictData& dict_data() const { return *dict_; }
  const std::string& callable_name() const { return fn_->first; }
  const NativeFunction& function() const { return fn_->second; }

 private:
  Kind kind_ = Kind::kUndefined;
  bool tuple_ = false;
  bool namespace_ = false;
  int64_t int_ = 0;
  double float_ = 0;
  std::string str_;
  std::shared_ptr<std::vector<Value>> list_;
  std::shared_ptr<DictData> dict_;
  std::shared_ptr<std::pair<std::string, NativeFunction>> fn_;
};

// Python truthiness: empty string/list/dict, 0, None and undefined are false.
bool truthy(const Value& v);
// Python ==: 1 == 1.0 == True, lists and dicts element-wise, undefined equals undefined.
bool equals(const Value& a, const Value& b);
// Python <: numbers with numbers, strings with strings, lists lexicographically; else ValueError.
bool less_than(const Value& a, const Value& b);
// Python str(): what {{ v }} prints (undefined prints as "").
std::string to_str(const Value& v);
// Python repr(): how items print inside a printed list or dict.
std::string to_repr(const Value& v);
// Python's repr of a float: shortest round-trip digits, "1.0", "1e-05", "1e+16", "inf".
std::string format_float(double f);
// Jinja2's name for the type in error messages: "dict object", "str object", ...
std::string type_name(const Value& v);

// Context values arrive as JSON; ordered_json keeps the client's key order.
Value from_json(const nlohmann::ordered_json& j);
Value from_json(const nlohmann::json& j);

// Python json.dumps(x, ensure_ascii=False, indent=indent, separators=..., sort_keys=...), which is
// transformers' tojson filter. `indent` empty means none (one line, ", " and ": " separators).
struct JsonStyle {
  bool has_indent = false;
  std::string indent;  // the text repeated per level ("  " for indent=2)
  std::string item_separator;
  std::string key_separator;
  bool sort_keys = false;
};
JsonStyle default_json_style(bool has_indent, std::string indent);
std::string to_json_text(const Value& v, const JsonStyle& style);

}  // namespace ps::jinja
