#include "chat/jinja_template.h"

#include <algorithm>

#include "chat/jinja_parser.h"
#include "chat/jinja_render.h"

namespace ps::jinja {

namespace {

// Jinja2 rejects an unknown filter or test when it compiles the template, so a checkpoint
// with a typo fails at load, not on the first request that reaches that branch.
void check_names(const Expr& e) {
  if (e.type == Expr::Type::kFilter && !is_known_filter(e.name))
    throw TemplateError(e.line, e.column, "No filter named '" + e.name + "'.");
  if (e.type == Expr::Type::kTest && !is_known_test(e.name))
    throw TemplateError(e.line, e.column, "No test named '" + e.name + "'.");
  for (const auto& c : e.children)
    if (c) check_names(*c);
  for (const auto& [k, v] : e.keyword) check_names(*v);
}

void check_names(const Body& body) {
  for (const auto& s : body) {
    for (const Expr* e : {s->expr.get(), s->condition.get()})
      if (e) check_names(*e);
    for (const auto& c : s->conditions) check_names(*c);
    for (const auto& p : s->params)
      if (p.default_value) check_names(*p.default_value);
    for (const auto& b : s->bodies) check_names(b);
    check_names(s->body);
    check_names(s->else_body);
  }
}

// `expr` reads a `content` field (x.content, x['content']), through filters and tests.
bool reads_content(const Expr& e) {
  if (e.type == Expr::Type::kAttribute && e.name == "content") return true;
  if (e.type == Expr::Type::kSubscript && e.children[1]->type == Expr::Type::kLiteral &&
      e.children[1]->value.is_string() && e.children[1]->value.string() == "content")
    return true;
  if ((e.type == Expr::Type::kFilter || e.type == Expr::Type::kTest) && !e.children.empty())
    return reads_content(*e.children[0]);
  return false;
}

bool loops_over_content(const Body& body, std::vector<std::string>& holders) {
  for (const auto& s : body) {
    if (s->type == Stmt::Type::kSet && s->targets.size() == 1 && reads_content(*s->expr))
      holders.push_back(s->targets[0]);
    if (s->type == Stmt::Type::kFor) {
      const Expr* it = s->expr.get();
      while ((it->type == Expr::Type::kFilter || it->type == Expr::Type::kTest) &&
             !it->children.empty())
        it = it->children[0].get();
      if (reads_content(*it)) return true;
      if (it->type == Expr::Type::kName &&
          (it->name == "content" ||
           std::find(holders.begin(), holders.end(), it->name) != holders.end()))
        return true;
    }
    for (const auto& b : s->bodies)
      if (loops_over_content(b, holders)) return true;
    if (loops_over_content(s->body, holders) || loops_over_content(s->else_body, holders))
      return true;
  }
  return false;
}

}  // namespace

bool Template::iterates_message_content() const {
  std::vector<std::string> holders;
  return loops_over_content(*body_, holders);
}

Template Template::parse(const std::string& source, const Options& options) {
  LexOptions lex;
  lex.trim_blocks = options.trim_blocks;
  lex.lstrip_blocks = options.lstrip_blocks;
  lex.keep_trailing_newline = options.keep_trailing_newline;
  Parser parser(tokenize(source, lex));
  auto body = std::make_shared<Body>(parser.parse_template());
  check_names(*body);
  Template t;
  t.source_ = source;
  t.body_ = std::move(body);
  return t;
}

std::string Template::render_value(const Value& context, const Limits& limits) const {
  if (!context.is_dict()) throw TemplateError(1, 1, "the render context must be a JSON object");
  Renderer renderer(context, limits);
  return renderer.render(*body_);
}

std::string Template::render(const nlohmann::ordered_json& context, const Limits& limits) const {
  Value v;
  try {
    v = from_json(context);
  } catch (const ValueError& e) {
    throw TemplateError(1, 1, e.what());
  }
  return render_value(v, limits);
}

std::string Template::render(const nlohmann::json& context, const Limits& limits) const {
  Value v;
  try {
    v = from_json(context);
  } catch (const ValueError& e) {
    throw TemplateError(1, 1, e.what());
  }
  return render_value(v, limits);
}

}  // namespace ps::jinja
