#pragma once
// The evaluator: walks the parsed template with Jinja2's scoping (a for-loop iteration and a
// macro call get their own frame; `if` does not), Undefined semantics and limits. Expressions
// are in jinja_eval.cpp, statements in jinja_exec.cpp, filters/tests/methods/globals in their
// own files.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "chat/jinja_ast.h"
#include "chat/jinja_template.h"

namespace ps::jinja {

using Frame = std::unordered_map<std::string, Value>;

class Renderer {
 public:
  Renderer(const Value& context, const Limits& limits);
  std::string render(const Body& body);

  // Used by filters, methods and globals.
  Value call(const Value& fn, const CallArgs& args);
  const Limits& limits() const { return limits_; }
  // Throws when a string a template builds would pass the output limit.
  void check_size(size_t bytes) const;
  // Counts one loop iteration (or range() item) against the limit.
  void count_iteration();

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  // jinja_exec.cpp
  Flow exec(const Body& body);
  Flow exec(const Stmt& s);
  Flow exec_for(const Stmt& s);
  void exec_set(const Stmt& s);
  std::string capture(const Body& body);
  Value make_macro(const Stmt& s);
  Value call_macro(const Stmt& macro, const CallArgs& args, const Value& caller);
  void emit(const std::string& text);

  // jinja_eval.cpp
  Value eval(const Expr& e);
  Value eval_inner(const Expr& e);
  Value eval_binary(const Expr& e);
  Value eval_filter(const Expr& e);
  Value eval_test(const Expr& e);
  CallArgs eval_args(const Expr& e, size_t first_child);
  Value lookup(const std::string& name) const;
  void assign(const std::string& name, Value v);

  const Value& context_;
  Limits limits_;
  std::vector<std::shared_ptr<Frame>> frames_;
  Frame globals_;
  std::string* out_ = nullptr;
  uint64_t iterations_ = 0;
  int call_depth_ = 0;
};

// jinja_filters.cpp / jinja_tests.cpp / jinja_methods.cpp / jinja_globals.cpp
Value apply_filter(Renderer& r, const std::string& name, const Value& v, const CallArgs& args);
bool apply_test(Renderer& r, const std::string& name, const Value& v, const CallArgs& args);
// obj.name as Jinja2 resolves it: a Python attribute (a str/dict method) first, then an item.
Value get_attribute(const Value& obj, const std::string& name);
// obj[key]: an item first, then (for a string key) an attribute.
Value get_item(const Value& obj, const Value& key);
Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step);
void add_globals(Frame& globals);
// The items a for loop visits: list items, dict keys, string characters; undefined is empty.
std::vector<Value> iterate(const Value& v);
// Throws the UndefinedError Jinja2 raises when an undefined value is used.
[[noreturn]] void fail_undefined(const Value& v);

// Argument access shared by filters, methods and globals.
const Value* arg(const CallArgs& args, size_t index, const char* keyword);

}  // namespace ps::jinja
