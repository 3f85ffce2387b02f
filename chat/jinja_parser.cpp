#include "chat/jinja_parser.h"

#include <algorithm>

namespace ps::jinja {

namespace {
constexpr int kMaxNesting = 100;  // Python's own parser gives up near this depth as well
}

Parser::DepthGuard::DepthGuard(Parser& parser, const Token& at) : p(parser) {
  if (++p.depth_ > kMaxNesting) {
    --p.depth_;
    p.fail(at, "template nested deeper than " + std::to_string(kMaxNesting) + " levels");
  }
}

const Token& Parser::peek(size_t ahead) const {
  return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
}
const Token& Parser::next() {
  const Token& t = tokens_[pos_];
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return t;
}
bool Parser::at_operator(const char* op) const {
  return peek().type == TokenType::kOperator && peek().text == op;
}
bool Parser::at_name(const char* name) const {
  return peek().type == TokenType::kName && peek().text == name;
}
bool Parser::skip_operator(const char* op) {
  if (!at_operator(op)) return false;
  next();
  return true;
}
bool Parser::skip_name(const char* name) {
  if (!at_name(name)) return false;
  next();
  return true;
}

static std::string describe(const Token& t) {
  switch (t.type) {
    case TokenType::kData:
      return "template data";
    case TokenType::kVariableBegin:
      return "'{{'";
    case TokenType::kVariableEnd:
      return "'}}'";
    case TokenType::kBlockBegin:
      return "'{%'";
    case TokenType::kBlockEnd:
      return "'%}'";
    case TokenType::kEnd:
      return "end of template";
    case TokenType::kString:
      return "string";
    default:
      return "'" + t.text + "'";
  }
}

void Parser::expect_operator(const char* op) {
  if (!skip_operator(op))
    fail(peek(), std::string("expected '") + op + "', got " + describe(peek()));
}
std::string Parser::expect_name() {
  if (peek().type != TokenType::kName) fail(peek(), "expected a name, got " + describe(peek()));
  return next().text;
}
void Parser::expect_block_end() {
  if (peek().type != TokenType::kBlockEnd) fail(peek(), "expected '%}', got " + describe(peek()));
  next();
}
void Parser::fail(const Token& at, const std::string& message) const {
  throw TemplateError(at.line, at.column, message);
}
ExprPtr Parser::node(Expr::Type type, const Token& at) const {
  auto e = std::make_unique<Expr>();
  e->type = type;
  e->line = at.line;
  e->column = at.column;
  return e;
}

Body Parser::parse_template() {
  Body body = parse_body({}, nullptr);
  if (peek().type != TokenType::kEnd) fail(peek(), "unexpected " + describe(peek()));
  return body;
}

// Reads statements until one of `end_tags` opens a block (consumed up to and including the
// tag name; *which says which) or, with no end tags, until the end of the template.
Body Parser::parse_body(const std::vector<std::string>& end_tags, std::string* which) {
  Body body;
  while (true) {
    const Token& t = peek();
    if (t.type == TokenType::kEnd) {
      if (!end_tags.empty()) {
        std::string expected;
        for (const auto& e : end_tags) expected += (expected.empty() ? "'" : " or '") + e + "'";
        fail(t, "unexpected end of template, expected " + expected);
      }
      return body;
    }
    if (t.type == TokenType::kData) {
      auto s = std::make_unique<Stmt>();
      s->type = Stmt::Type::kText;
      s->line = t.line;
      s->column = t.column;
      s->text = next().text;
      body.push_back(std::move(s));
    } else if (t.type == TokenType::kVariableBegin) {
      next();
      auto s = std::make_unique<Stmt>();
      s->type = Stmt::Type::kOutput;
      s->line = t.line;
      s->column = t.column;
      s->expr = parse_tuple(true);
      if (peek().type != TokenType::kVariableEnd)
        fail(peek(), "expected '}}', got " + describe(peek()));
      next();
      body.push_back(std::move(s));
    } else if (t.type == TokenType::kBlockBegin) {
      const Token& name = peek(1);
      if (name.type == TokenType::kName &&
          std::find(end_tags.begin(), end_tags.end(), name.text) != end_tags.end()) {
        next();
        *which = next().text;
        return body;
      }
      body.push_back(parse_statement());
    } else {
      fail(t, "unexpected " + describe(t));
    }
  }
}

StmtPtr Parser::parse_statement() {
  DepthGuard guard(*this, peek());
  next();  // {%
  const Token& tag = peek();
  if (tag.type != TokenType::kName) fail(tag, "expected a tag name, got " + describe(tag));
  std::string name = next().text;
  auto simple = [&](Stmt::Type type) {
    auto s = std::make_unique<Stmt>();
    s->type = type;
    s->line = tag.line;
    s->column = tag.column;
    return s;
  };
  if (name == "if") return parse_if(tag);
  if (name == "for") return parse_for(tag);
  if (name == "set") return parse_set(tag);
  if (name == "macro") return parse_macro(tag);
  if (name == "call") return parse_call_block(tag);
  if (name == "filter") return parse_filter_block(tag);
  if (name == "break" || name == "continue") {
    if (loop_depth_ == 0) fail(tag, "'" + name + "' outside of a for loop");
    expect_block_end();
    return simple(name == "break" ? Stmt::Type::kBreak : Stmt::Type::kContinue);
  }
  if (name == "generation") {
    expect_block_end();
    auto s = simple(Stmt::Type::kScope);
    std::string which;
    s->body = parse_body({"endgeneration"}, &which);
    expect_block_end();
    return s;
  }
  static const char* unsupported[] = {"include", "import", "from",      "extends",
                                      "block",   "with",   "autoescape"};
  for (const char* u : unsupported)
    if (name == u) fail(tag, "the '" + name + "' tag is not supported in chat templates");
  fail(tag, "unknown tag '" + name + "'");
}

StmtPtr Parser::parse_if(const Token& tag) {
  auto s = std::make_unique<Stmt>();
  s->type = Stmt::Type::kIf;
  s->line = tag.line;
  s->column = tag.column;
  std::string which = "if";
  while (true) {
    if (which == "else") {
      expect_block_end();
      s->else_body = parse_body({"endif"}, &which);
      expect_block_end();
      return s;
    }
    s->conditions.push_back(parse_tuple(false));
    expect_block_end();
    s->bodies.push_back(parse_body({"elif", "else", "endif"}, &which));
    if (which == "endif") {
      expect_block_end();
      return s;
    }
  }
}

std::vector<std::string> Parser::parse_targets() {
  std::vector<std::string> targets;
  bool paren = skip_operator("(");
  do {
    if (paren && at_operator(")")) break;
    targets.push_back(expect_name());
  } while (skip_operator(","));
  if (paren) expect_operator(")");
  return targets;
}

StmtPtr Parser::parse_for(const Token& tag) {
  auto s = std::make_unique<Stmt>();
  s->type = Stmt::Type::kFor;
  s->line = tag.line;
  s->column = tag.column;
  s->targets = parse_targets();
  if (!skip_name("in")) fail(peek(), "expected 'in', got " + describe(peek()));
  s->expr = parse_tuple(false);
  if (skip_name("if")) s->condition = parse_expression(true);
  if (at_name("recursive")) fail(peek(), "recursive for loops are not supported");
  expect_block_end();
  std::string which;
  ++loop_depth_;
  s->body = parse_body({"else", "endfor"}, &which);
  --loop_depth_;
  if (which == "else") {
    expect_block_end();
    s->else_body = parse_body({"endfor"}, &which);
  }
  expect_block_end();
  return s;
}

StmtPtr Parser::parse_set(const Token& tag) {
  auto s = std::make_unique<Stmt>();
  s->line = tag.line;
  s->column = tag.column;
  if (peek().type == TokenType::kName && peek(1).type == TokenType::kOperator &&
      peek(1).text == ".") {
    s->target_object = next().text;
    next();
    s->attribute = expect_name();
  } else {
    s->targets = parse_targets();
  }
  if (skip_operator("=")) {
    s->type = Stmt::Type::kSet;
    s->expr = parse_tuple(true);
    expect_block_end();
    return s;
  }
  if (s->targets.size() != 1) fail(peek(), "expected '=' after the set targets");
  s->type = Stmt::Type::kSetBlock;
  expect_block_end();
  std::string which;
  s->body = parse_body({"endset"}, &which);
  expect_block_end();
  return s;
}

std::vector<MacroParam> Parser::parse_params() {
  std::vector<MacroParam> params;
  expect_operator("(");
  while (!at_operator(")")) {
    if (!params.empty()) expect_operator(",");
    if (at_operator(")")) break;
    MacroParam p;
    p.name = expect_name();
    if (skip_operator("=")) p.default_value = parse_expression(true);
    params.push_back(std::move(p));
  }
  expect_operator(")");
  return params;
}

StmtPtr Parser::parse_macro(const Token& tag) {
  auto s = std::make_unique<Stmt>();
  s->type = Stmt::Type::kMacro;
  s->line = tag.line;
  s->column = tag.column;
  s->name = expect_name();
  s->params = parse_params();
  expect_block_end();
  std::string which;
  int saved = loop_depth_;
  loop_depth_ = 0;
  s->body = parse_body({"endmacro"}, &which);
  loop_depth_ = saved;
  if (peek().type == TokenType::kName) next();  // {% endmacro name %}
  expect_block_end();
  return s;
}

StmtPtr Parser::parse_call_block(const Token& tag) {
  auto s = std::make_unique<Stmt>();
  s->type = Stmt::Type::kCallBlock;
  s->line = tag.line;
  s->column = tag.column;
  if (at_operator("(")) s->params = parse_params();
  s->expr = parse_expression(true);
  if (s->expr->type != Expr::Type::kCall) fail(tag, "expected a call after 'call'");
  expect_block_end();
  std::string which;
  s->body = parse_body({"endcall"}, &which);
  expect_block_end();
  return s;
}

StmtPtr Parser::parse_filter_block(const Token& tag) {
  auto s = std::make_unique<Stmt>();
  s->type = Stmt::Type::kFilterBlock;
  s->line = tag.line;
  s->column = tag.column;
  // The body's text stands in for a name no template can write; filters chain onto it.
  ExprPtr chain = node(Expr::Type::kName, tag);
  chain->name = " body";
  do {
    const Token& at = peek();
    ExprPtr f = node(Expr::Type::kFilter, at);
    f->name = expect_name();
    f->children.push_back(std::move(chain));
    if (at_operator("(")) parse_call_args(*f);
    chain = std::move(f);
  } while (skip_operator("|"));
  s->expr = std::move(chain);
  expect_block_end();
  std::string which;
  s->body = parse_body({"endfilter"}, &which);
  expect_block_end();
  return s;
}

}  // namespace ps::jinja
