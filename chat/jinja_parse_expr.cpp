// Expressions, following the precedence of Jinja2's parser: conditional < or < and < not <
// comparison < + - < ~ < * / // % < ** < unary - + < postfix (. [] ()) and filters/tests.
#include <cstdlib>

#include "chat/jinja_parser.h"

namespace ps::jinja {

ExprPtr Parser::parse_tuple(bool with_condition) {
  const Token& at = peek();
  ExprPtr first = parse_expression(with_condition);
  if (!at_operator(",")) return first;
  ExprPtr tuple = node(Expr::Type::kTuple, at);
  tuple->children.push_back(std::move(first));
  while (skip_operator(",")) {
    if (peek().type == TokenType::kVariableEnd || peek().type == TokenType::kBlockEnd ||
        at_operator(")"))
      break;
    tuple->children.push_back(parse_expression(with_condition));
  }
  return tuple;
}

ExprPtr Parser::parse_expression(bool with_condition) {
  DepthGuard guard(*this, peek());
  const Token& at = peek();
  ExprPtr expr = parse_or();
  if (!with_condition) return expr;
  while (skip_name("if")) {
    ExprPtr cond = node(Expr::Type::kCondition, at);
    cond->children.push_back(parse_or());
    cond->children.push_back(std::move(expr));
    cond->children.push_back(skip_name("else") ? parse_expression(true) : nullptr);
    expr = std::move(cond);
  }
  return expr;
}

static ExprPtr binary(ExprPtr left, std::string op, ExprPtr right, const Token& at) {
  auto e = std::make_unique<Expr>();
  e->type = Expr::Type::kBinary;
  e->line = at.line;
  e->column = at.column;
  e->name = std::move(op);
  e->children.push_back(std::move(left));
  e->children.push_back(std::move(right));
  return e;
}

ExprPtr Parser::parse_or() {
  ExprPtr left = parse_and();
  while (at_name("or")) {
    const Token& at = next();
    left = binary(std::move(left), "or", parse_and(), at);
  }
  return left;
}

ExprPtr Parser::parse_and() {
  ExprPtr left = parse_not();
  while (at_name("and")) {
    const Token& at = next();
    left = binary(std::move(left), "and", parse_not(), at);
  }
  return left;
}

ExprPtr Parser::parse_not() {
  if (at_name("not")) {
    DepthGuard guard(*this, peek());
    const Token& at = next();
    ExprPtr e = node(Expr::Type::kUnary, at);
    e->name = "not";
    e->children.push_back(parse_not());
    return e;
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
  ExprPtr left = parse_math1();
  while (true) {
    const Token& at = peek();
    std::string op;
    if (at.type == TokenType::kOperator && (at.text == "==" || at.text == "!=" || at.text == "<" ||
                                            at.text == ">" || at.text == "<=" || at.text == ">=")) {
      op = next().text;
    } else if (skip_name("in")) {
      op = "in";
    } else if (at_name("not") && peek(1).type == TokenType::kName && peek(1).text == "in") {
      next();
      next();
      op = "not in";
    } else {
      return left;
    }
    left = binary(std::move(left), op, parse_math1(), at);
  }
}

ExprPtr Parser::parse_math1() {
  ExprPtr left = parse_concat();
  while (at_operator("+") || at_operator("-")) {
    const Token& at = next();
    left = binary(std::move(left), at.text, parse_concat(), at);
  }
  return left;
}

ExprPtr Parser::parse_concat() {
  ExprPtr left = parse_math2();
  while (at_operator("~")) {
    const Token& at = next();
    left = binary(std::move(left), "~", parse_math2(), at);
  }
  return left;
}

ExprPtr Parser::parse_math2() {
  ExprPtr left = parse_pow();
  while (at_operator("*") || at_operator("/") || at_operator("//") || at_operator("%")) {
    const Token& at = next();
    left = binary(std::move(left), at.text, parse_pow(), at);
  }
  return left;
}

ExprPtr Parser::parse_pow() {
  ExprPtr left = parse_unary(true);
  while (at_operator("**")) {
    const Token& at = next();
    left = binary(std::move(left), "**", parse_unary(true), at);
  }
  return left;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  DepthGuard guard(*this, peek());
  const Token& at = peek();
  ExprPtr e;
  if (at_operator("-") || at_operator("+")) {
    next();
    e = node(Expr::Type::kUnary, at);
    e->name = at.text;
    e->children.push_back(parse_unary(false));
  } else {
    e = parse_primary();
  }
  e = parse_postfix(std::move(e));
  if (with_filter) e = parse_filter_expr(std::move(e));
  return e;
}

ExprPtr Parser::parse_primary() {
  const Token& at = peek();
  if (at.type == TokenType::kName) {
    next();
    ExprPtr e = node(Expr::Type::kLiteral, at);
    if (at.text == "true" || at.text == "True") {
      e->value = Value(true);
    } else if (at.text == "false" || at.text == "False") {
      e->value = Value(false);
    } else if (at.text == "none" || at.text == "None") {
      e->value = Value::none();
    } else {
      e->type = Expr::Type::kName;
      e->name = at.text;
    }
    return e;
  }
  if (at.type == TokenType::kString) {
    std::string s = next().text;
    while (peek().type == TokenType::kString) s += next().text;  // 'a' 'b' is 'ab'
    ExprPtr e = node(Expr::Type::kLiteral, at);
    e->value = Value(std::move(s));
    return e;
  }
  if (at.type == TokenType::kInteger || at.type == TokenType::kFloat) {
    next();
    ExprPtr e = node(Expr::Type::kLiteral, at);
    if (at.type == TokenType::kFloat) {
      e->value = Value(std::strtod(at.text.c_str(), nullptr));
    } else {
      errno = 0;
      long long v = std::strtoll(at.text.c_str(), nullptr, 10);
      if (errno == ERANGE) fail(at, "integer literal out of range");
      e->value = Value(static_cast<int64_t>(v));
    }
    return e;
  }
  if (skip_operator("(")) {
    if (skip_operator(")")) return node(Expr::Type::kTuple, at);
    ExprPtr inner = parse_expression(true);
    if (at_operator(",")) {
      ExprPtr tuple = node(Expr::Type::kTuple, at);
      tuple->children.push_back(std::move(inner));
      while (skip_operator(",")) {
        if (at_operator(")")) break;
        tuple->children.push_back(parse_expression(true));
      }
      inner = std::move(tuple);
    }
    expect_operator(")");
    return inner;
  }
  if (skip_operator("[")) {
    ExprPtr list = node(Expr::Type::kList, at);
    while (!at_operator("]")) {
      if (!list->children.empty()) expect_operator(",");
      if (at_operator("]")) break;
      list->children.push_back(parse_expression(true));
    }
    expect_operator("]");
    return list;
  }
  if (skip_operator("{")) {
    ExprPtr dict = node(Expr::Type::kDict, at);
    while (!at_operator("}")) {
      if (!dict->children.empty()) expect_operator(",");
      if (at_operator("}")) break;
      dict->children.push_back(parse_expression(true));
      expect_operator(":");
      dict->children.push_back(parse_expression(true));
    }
    expect_operator("}");
    return dict;
  }
  fail(at, "unexpected " + (at.type == TokenType::kVariableEnd ? std::string("'}}'")
                            : at.type == TokenType::kBlockEnd  ? std::string("'%}'")
                            : at.type == TokenType::kEnd       ? std::string("end of template")
                                                               : "'" + at.text + "'"));
}

ExprPtr Parser::parse_postfix(ExprPtr e) {
  while (true) {
    const Token& at = peek();
    if (skip_operator(".")) {
      if (peek().type == TokenType::kInteger) {
        ExprPtr sub = node(Expr::Type::kSubscript, at);
        ExprPtr index = node(Expr::Type::kLiteral, peek());
        index->value = Value(static_cast<int64_t>(std::strtoll(next().text.c_str(), nullptr, 10)));
        sub->children.push_back(std::move(e));
        sub->children.push_back(std::move(index));
        e = std::move(sub);
        continue;
      }
      ExprPtr attr = node(Expr::Type::kAttribute, at);
      attr->name = expect_name();
      attr->children.push_back(std::move(e));
      e = std::move(attr);
    } else if (skip_operator("[")) {
      e = parse_subscript(std::move(e), at);
    } else if (at_operator("(")) {
      ExprPtr call = node(Expr::Type::kCall, at);
      call->children.push_back(std::move(e));
      parse_call_args(*call);
      e = std::move(call);
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr target, const Token& at) {
  ExprPtr parts[3];
  bool slice = false;
  for (int i = 0; i < 3; ++i) {
    if (!at_operator(":") && !at_operator("]")) parts[i] = parse_expression(true);
    if (i < 2 && skip_operator(":")) {
      slice = true;
      continue;
    }
    break;
  }
  expect_operator("]");
  ExprPtr e = node(slice ? Expr::Type::kSlice : Expr::Type::kSubscript, at);
  e->children.push_back(std::move(target));
  if (!slice) {
    if (!parts[0]) fail(at, "expected an index inside '[]'");
    e->children.push_back(std::move(parts[0]));
    return e;
  }
  for (auto& p : parts) e->children.push_back(std::move(p));
  return e;
}

void Parser::parse_call_args(Expr& call) {
  expect_operator("(");
  bool first = true;
  while (!at_operator(")")) {
    if (!first) expect_operator(",");
    first = false;
    if (at_operator(")")) break;
    if (at_operator("*") || at_operator("**")) {
      // f(*args, **kwargs): kept among the keywords under the operator's name, expanded when
      // the call is evaluated.
      std::string star = next().text;
      call.keyword.emplace_back(star, parse_expression(true));
    } else if (peek().type == TokenType::kName && peek(1).type == TokenType::kOperator &&
               peek(1).text == "=") {
      std::string key = next().text;
      next();
      call.keyword.emplace_back(key, parse_expression(true));
    } else {
      for (const auto& [key, value] : call.keyword)
        if (key != "*" && key != "**") fail(peek(), "positional argument after a keyword argument");
      call.children.push_back(parse_expression(true));
    }
  }
  expect_operator(")");
}

ExprPtr Parser::parse_filter_expr(ExprPtr e) {
  while (true) {
    const Token& at = peek();
    if (skip_operator("|")) {
      ExprPtr f = node(Expr::Type::kFilter, peek());
      f->name = expect_name();
      f->children.push_back(std::move(e));
      if (at_operator("(")) parse_call_args(*f);
      e = std::move(f);
    } else if (skip_name("is")) {
      ExprPtr t = node(Expr::Type::kTest, at);
      t->negated = skip_name("not");
      t->name = expect_name();
      t->children.push_back(std::move(e));
      const Token& arg = peek();
      if (at_operator("(")) {
        parse_call_args(*t);
      } else if ((arg.type == TokenType::kName || arg.type == TokenType::kString ||
                  arg.type == TokenType::kInteger || arg.type == TokenType::kFloat ||
                  at_operator("[") || at_operator("{")) &&
                 !at_name("else") && !at_name("or") && !at_name("and")) {
        if (at_name("is")) fail(arg, "You cannot chain multiple tests with is");
        t->children.push_back(parse_postfix(parse_primary()));
      }
      e = std::move(t);
    } else if (at_operator("(")) {
      ExprPtr call = node(Expr::Type::kCall, at);
      call->children.push_back(std::move(e));
      parse_call_args(*call);
      e = std::move(call);
    } else {
      return e;
    }
  }
}

}  // namespace ps::jinja
