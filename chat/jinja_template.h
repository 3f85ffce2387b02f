#pragma once
// A chat template, parsed once and rendered per request, as transformers renders it: Jinja2's
// ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with loop controls, its
// own tojson, raise_exception() and strftime_now(). Output is byte-identical to Jinja2's for
// the constructs chat templates use (tests/e2e/chat_template_corpus.sh checks real ones).
//
//   auto tpl = ps::jinja::Template::parse(source);
//   std::string prompt = tpl.render(context);  // throws ps::jinja::TemplateError
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/jinja_ast.h"
#include "chat/jinja_lexer.h"
#include "chat/jinja_value.h"

namespace ps::jinja {

struct Options {
  bool trim_blocks = true;  // transformers' settings
  bool lstrip_blocks = true;
  bool keep_trailing_newline = false;
};

// A hostile template (or context) fails with a TemplateError naming the limit, never hangs or
// exhausts memory.
struct Limits {
  size_t max_output_bytes = 4u << 20;       // also caps every string a template builds
  uint64_t max_loop_iterations = 1u << 20;  // for-loop iterations + range() items, in total
  int max_call_depth = 64;                  // nested macro calls (recursion)
};

class Template {
 public:
  // Throws TemplateError for bad syntax, an unknown filter or an unknown test.
  static Template parse(const std::string& source, const Options& options = {});

  // `context` is a JSON object: messages, tools, add_generation_prompt, bos_token, ... and any
  // chat_template_kwargs. ordered_json keeps the key order tojson prints.
  std::string render(const nlohmann::ordered_json& context, const Limits& limits = {}) const;
  std::string render(const nlohmann::json& context, const Limits& limits = {}) const;
  std::string render_value(const Value& context, const Limits& limits) const;

  const std::string& source() const { return source_; }

  // Whether some for loop iterates a message's content (`for part in message['content']`,
  // or a variable holding it): such a template takes OpenAI content parts as given; others
  // expect content as a string. This is vLLM's test for the "openai" content format.
  bool iterates_message_content() const;

 private:
  std::string source_;
  std::shared_ptr<const Body> body_;
};

// The names parse() accepts after `|` and `is`.
bool is_known_filter(const std::string& name);
bool is_known_test(const std::string& name);

}  // namespace ps::jinja
