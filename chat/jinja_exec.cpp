// Statements: output, if, for (with loop.*), set, macros and call blocks, with the limits.
#include "chat/jinja_render.h"

namespace ps::jinja {

Renderer::Renderer(const Value& context, const Limits& limits)
    : context_(context), limits_(limits) {
  auto root = std::make_shared<Frame>();
  if (context_.is_dict())
    for (const auto& [k, v] : context_.dict_data().items)
      if (k.is_string()) (*root)[k.string()] = v;
  frames_.push_back(std::move(root));
  add_globals(globals_);
}

std::string Renderer::render(const Body& body) {
  std::string out;
  out_ = &out;
  exec(body);
  return out;
}

void Renderer::check_size(size_t bytes) const {
  if (bytes > limits_.max_output_bytes)
    throw ValueError("output limit exceeded: the template produced more than " +
                     std::to_string(limits_.max_output_bytes) + " bytes");
}

void Renderer::count_iteration() {
  if (++iterations_ > limits_.max_loop_iterations)
    throw ValueError("loop limit exceeded: more than " +
                     std::to_string(limits_.max_loop_iterations) + " loop iterations");
}

void Renderer::emit(const std::string& text) {
  check_size(out_->size() + text.size());
  out_->append(text);
}

Renderer::Flow Renderer::exec(const Body& body) {
  for (const auto& s : body) {
    Flow f = exec(*s);
    if (f != Flow::kNormal) return f;
  }
  return Flow::kNormal;
}

std::string Renderer::capture(const Body& body) {
  std::string buffer;
  std::string* saved = out_;
  out_ = &buffer;
  try {
    exec(body);
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  return buffer;
}

Renderer::Flow Renderer::exec(const Stmt& s) {
  try {
    switch (s.type) {
      case Stmt::Type::kText:
        emit(s.text);
        return Flow::kNormal;
      case Stmt::Type::kOutput:
        emit(to_str(eval(*s.expr)));
        return Flow::kNormal;
      case Stmt::Type::kIf:
        for (size_t i = 0; i < s.conditions.size(); ++i)
          if (truthy(eval(*s.conditions[i]))) return exec(s.bodies[i]);
        return exec(s.else_body);
      case Stmt::Type::kFor:
        return exec_for(s);
      case Stmt::Type::kSet:
        exec_set(s);
        return Flow::kNormal;
      case Stmt::Type::kSetBlock:
        assign(s.targets[0], Value(capture(s.body)));
        return Flow::kNormal;
      case Stmt::Type::kMacro:
        assign(s.name, make_macro(s));
        return Flow::kNormal;
      case Stmt::Type::kCallBlock: {
        // caller() renders the body where the call block stands: it sees the variables
        // visible here, so they are copied into the frame it will run in.
        auto snapshot = std::make_shared<Frame>();
        for (const auto& f : frames_)
          for (const auto& [k, v] : *f) (*snapshot)[k] = v;
        const Stmt* block = &s;
        Value caller =
            Value::callable("caller", [this, block, snapshot](const CallArgs& args, Renderer&) {
              auto frame = std::make_shared<Frame>();
              for (size_t i = 0; i < block->params.size(); ++i) {
                const Value* a = arg(args, i, block->params[i].name.c_str());
                (*frame)[block->params[i].name] =
                    a ? *a : Value::undefined("'" + block->params[i].name + "' is undefined");
              }
              auto saved = frames_;
              frames_ = {snapshot, frame};
              std::string text;
              try {
                text = capture(block->body);
              } catch (...) {
                frames_ = saved;
                throw;
              }
              frames_ = saved;
              return Value(std::move(text));
            });
        const Expr& call = *s.expr;
        Value fn = eval(*call.children[0]);
        if (!fn.is_callable() || fn.callable_name().rfind("macro ", 0) != 0)
          throw ValueError("a call block needs a macro");
        CallArgs args = eval_args(call, 1);
        args.keyword.emplace_back("caller", caller);
        emit(to_str(this->call(fn, args)));
        return Flow::kNormal;
      }
      case Stmt::Type::kFilterBlock: {
        std::string body = capture(s.body);
        auto frame = std::make_shared<Frame>();
        (*frame)[" body"] = Value(std::move(body));
        frames_.push_back(frame);
        Value v;
        try {
          v = eval(*s.expr);
        } catch (...) {
          frames_.pop_back();
          throw;
        }
        frames_.pop_back();
        emit(to_str(v));
        return Flow::kNormal;
      }
      case Stmt::Type::kBreak:
        return Flow::kBreak;
      case Stmt::Type::kContinue:
        return Flow::kContinue;
      case Stmt::Type::kScope:
        return exec(s.body);
    }
  } catch (const ValueError& err) {
    throw TemplateError(s.line, s.column, err.what());
  }
  return Flow::kNormal;
}

static void bind_targets(Frame& frame, const std::vector<std::string>& targets, const Value& item) {
  if (targets.size() == 1) {
    frame[targets[0]] = item;
    return;
  }
  std::vector<Value> parts = iterate(item);
  if (parts.size() != targets.size())
    throw ValueError(
        parts.size() < targets.size()
            ? "not enough values to unpack (expected " + std::to_string(targets.size()) + ", got " +
                  std::to_string(parts.size()) + ")"
            : "too many values to unpack (expected " + std::to_string(targets.size()) + ")");
  for (size_t i = 0; i < targets.size(); ++i) frame[targets[i]] = parts[i];
}

Renderer::Flow Renderer::exec_for(const Stmt& s) {
  Value iterable = eval(*s.expr);
  if (iterable.is_none() || iterable.is_number() || iterable.is_bool())
    throw ValueError("'" + type_name(iterable) + "' object is not iterable");
  // Checked before iterate() materialises the items: a 4 MB string is 4 million of them.
  size_t count = iterable.is_list()     ? iterable.items().size()
                 : iterable.is_dict()   ? iterable.dict_data().items.size()
                 : iterable.is_string() ? iterable.string().size()
                                        : 0;
  if (count > limits_.max_loop_iterations - std::min(iterations_, limits_.max_loop_iterations))
    throw ValueError("loop limit exceeded: more than " +
                     std::to_string(limits_.max_loop_iterations) + " loop iterations");
  std::vector<Value> items = iterate(iterable);
  if (s.condition) {
    // `for x in xs if cond` filters first; loop.* then counts only the kept items.
    std::vector<Value> kept;
    for (const auto& item : items) {
      count_iteration();
      auto frame = std::make_shared<Frame>();
      bind_targets(*frame, s.targets, item);
      frames_.push_back(frame);
      bool keep;
      try {
        keep = truthy(eval(*s.condition));
      } catch (...) {
        frames_.pop_back();
        throw;
      }
      frames_.pop_back();
      if (keep) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) return exec(s.else_body);  // a break here belongs to an outer loop
  const int64_t n = static_cast<int64_t>(items.size());
  for (int64_t i = 0; i < n; ++i) {
    count_iteration();
    auto frame = std::make_shared<Frame>();
    bind_targets(*frame, s.targets, items[i]);
    Value loop = Value::dict();
    auto& d = loop.dict_data();
    d.set("index", Value(i + 1));
    d.set("index0", Value(i));
    d.set("revindex", Value(n - i));
    d.set("revindex0", Value(n - i - 1));
    d.set("first", Value(i == 0));
    d.set("last", Value(i == n - 1));
    d.set("length", Value(n));
    d.set("depth", Value(1));
    d.set("depth0", Value(0));
    d.set("previtem", i > 0 ? items[i - 1] : Value::undefined("there is no previous item"));
    d.set("nextitem", i + 1 < n ? items[i + 1] : Value::undefined("there is no next item"));
    d.set("cycle", Value::callable("loop.cycle", [i](const CallArgs& args, Renderer&) {
            if (args.positional.empty()) throw ValueError("no items for cycling given");
            return args.positional[static_cast<size_t>(i) % args.positional.size()];
          }));
    (*frame)["loop"] = loop;
    frames_.push_back(frame);
    Flow f;
    try {
      f = exec(s.body);
    } catch (...) {
      frames_.pop_back();
      throw;
    }
    frames_.pop_back();
    if (f == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

void Renderer::exec_set(const Stmt& s) {
  Value v = eval(*s.expr);
  if (!s.target_object.empty()) {
    Value ns = lookup(s.target_object);
    if (!ns.is_namespace()) throw ValueError("cannot assign attribute on non-namespace object");
    ns.dict_data().set(Value(s.attribute), std::move(v));
    return;
  }
  if (s.targets.size() == 1) {
    assign(s.targets[0], std::move(v));
    return;
  }
  Frame values;
  bind_targets(values, s.targets, v);
  for (auto& [k, x] : values) assign(k, std::move(x));
}

Value Renderer::make_macro(const Stmt& s) {
  const Stmt* macro = &s;
  return Value::callable("macro " + s.name, [macro](const CallArgs& args, Renderer& r) {
    Value caller;
    CallArgs rest = args;
    for (auto it = rest.keyword.begin(); it != rest.keyword.end(); ++it) {
      if (it->first == "caller") {
        caller = it->second;
        rest.keyword.erase(it);
        break;
      }
    }
    return r.call_macro(*macro, rest, caller);
  });
}

Value Renderer::call_macro(const Stmt& m, const CallArgs& args, const Value& caller) {
  if (call_depth_ >= limits_.max_call_depth)
    throw ValueError("recursion limit exceeded: macro calls nested deeper than " +
                     std::to_string(limits_.max_call_depth));
  if (args.positional.size() > m.params.size())
    throw ValueError("macro '" + m.name + "' takes not more than " +
                     std::to_string(m.params.size()) + " argument(s)");
  for (const auto& [key, value] : args.keyword) {
    bool known = false;
    for (const auto& p : m.params) known = known || p.name == key;
    if (!known) throw ValueError("macro '" + m.name + "' takes no keyword argument '" + key + "'");
  }
  // A macro sees its arguments and the template's top-level names, not its caller's locals.
  auto frame = std::make_shared<Frame>();
  auto saved = frames_;
  frames_ = {saved.front(), frame};
  ++call_depth_;
  std::string text;
  try {
    for (size_t i = 0; i < m.params.size(); ++i) {
      const auto& p = m.params[i];
      const Value* given = arg(args, i, p.name.c_str());
      if (given)
        (*frame)[p.name] = *given;
      else if (p.default_value)
        (*frame)[p.name] = eval(*p.default_value);
      else
        (*frame)[p.name] = Value::undefined("'" + p.name + "' is undefined");
    }
    if (caller.is_callable()) (*frame)["caller"] = caller;
    text = capture(m.body);
  } catch (...) {
    frames_ = saved;
    --call_depth_;
    throw;
  }
  frames_ = saved;
  --call_depth_;
  return Value(std::move(text));
}

}  // namespace ps::jinja
