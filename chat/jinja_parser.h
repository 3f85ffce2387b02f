#pragma once
// Recursive-descent parser for the Jinja2 subset chat templates use, with Jinja2's operator
// precedence. Statements are in jinja_parser.cpp, expressions in jinja_parse_expr.cpp.
#include <string>
#include <vector>

#include "chat/jinja_ast.h"
#include "chat/jinja_lexer.h"

namespace ps::jinja {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}
  Body parse_template();

 private:
  // Statements.
  Body parse_body(const std::vector<std::string>& end_tags, std::string* which);
  StmtPtr parse_statement();
  StmtPtr parse_if(const Token& tag);
  StmtPtr parse_for(const Token& tag);
  StmtPtr parse_set(const Token& tag);
  StmtPtr parse_macro(const Token& tag);
  StmtPtr parse_call_block(const Token& tag);
  StmtPtr parse_filter_block(const Token& tag);
  std::vector<MacroParam> parse_params();
  std::vector<std::string> parse_targets();
  void expect_block_end();

  // Expressions, lowest precedence first.
  ExprPtr parse_tuple(bool with_condition);
  ExprPtr parse_expression(bool with_condition = true);
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_filter_expr(ExprPtr node);
  ExprPtr parse_subscript(ExprPtr node, const Token& at);
  void parse_call_args(Expr& call);

  // Token access.
  const Token& peek(size_t ahead = 0) const;
  const Token& next();
  bool at_operator(const char* op) const;
  bool at_name(const char* name) const;
  bool skip_operator(const char* op);
  bool skip_name(const char* name);
  void expect_operator(const char* op);
  std::string expect_name();
  [[noreturn]] void fail(const Token& at, const std::string& message) const;
  ExprPtr node(Expr::Type type, const Token& at) const;

  // Nesting guards: a hostile template of 100000 '(' must fail, not overflow the stack.
  struct DepthGuard {
    DepthGuard(Parser& p, const Token& at);
    ~DepthGuard() { --p.depth_; }
    Parser& p;
  };

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace ps::jinja
