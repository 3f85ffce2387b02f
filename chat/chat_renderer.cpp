#include "chat/chat_renderer.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include "chat/template_source.h"

namespace ps::chat {

namespace {

// The builtins, written as the Jinja templates they stand for so that every prompt, builtin or
// not, goes through one renderer. Special tokens are literal text, as the old C++ renderer
// wrote them (tests/chat/chat_renderer_test.cpp checks that the two agree).
struct Builtin {
  const char* name;
  const char* source;
};
constexpr Builtin kBuiltins[] = {
    {"chatml",
     "{% for m in messages %}<|im_start|>{{ m.role }}\n"
     "{{ m.content if m.content is string else '' }}<|im_end|>\n"
     "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"},
    {"llama3",
     "{% if messages %}<|begin_of_text|>{% endif %}{% for m in messages %}"
     "<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n"
     "{{ (m.content if m.content is string else '') | trim }}<|eot_id|>{% endfor %}"
     "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"},
    // A system message is a preamble line: the format has no speaker name for it.
    {"plain",
     "{% for m in messages %}{% if m.role == 'user' %}用户:{% elif m.role == 'assistant' %}助手:"
     "{% endif %}{{ m.content if m.content is string else '' }}\n{% endfor %}"
     "{% if add_generation_prompt %}助手:{% endif %}"},
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The prompt a template writes for one user turn, from which detect_reasoning_style tells
// whether the generation prompt leaves <think> open. A template that refuses this minimal
// conversation simply gives no hint.
std::string probe_generation_prompt(const jinja::Template& tpl, const SpecialTokens& tokens) {
  ChatPromptRequest probe;
  probe.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "hi"}}});
  try {
    return render_chat_prompt(tpl, probe, tokens);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

bool template_iterates_content(const std::string& source) {
  // `for x in message['content']`, `for x in message.content`, or over a variable named
  // content (a macro parameter or a `set content = message.content`).
  static const std::regex loop(
      R"(for\s+\w+\s+in\s+(\w+(\[\s*['"]content['"]\s*\]|\.content\b)|content\b))");
  return std::regex_search(source, loop);
}

nlohmann::ordered_json join_content_parts(const nlohmann::ordered_json& messages) {
  nlohmann::ordered_json out = messages;
  for (auto& m : out) {
    if (!m.is_object()) continue;
    auto it = m.find("content");
    // A null content (an assistant turn that only called tools) becomes "", as vLLM renders it
    // for string-content templates: Qwen's template tests `'</think>' in content`, which a
    // None would fail.
    if (it != m.end() && it->is_null()) *it = "";
    if (it == m.end() || !it->is_array()) continue;
    std::string text;
    bool first = true;
    for (const auto& part : *it) {
      if (!part.is_object()) continue;
      auto t = part.find("text");
      if (t == part.end() || !t->is_string()) continue;
      if (!first) text += "\n";
      text += t->get<std::string>();
      first = false;
    }
    *it = text;
  }
  return out;
}

std::optional<ChatRenderer> ChatRenderer::builtin(const std::string& name) {
  const std::string n = lower(name) == "llama-3" ? "llama3" : lower(name);
  for (const Builtin& b : kBuiltins) {
    if (n != b.name) continue;
    ChatRenderer r = from_templates({{"default", b.source}}, std::string("builtin ") + b.name, {});
    r.description_ = std::string(b.name) + " (builtin)";
    return r;
  }
  return std::nullopt;
}

std::string ChatRenderer::builtin_names() {
  std::string names;
  for (const Builtin& b : kBuiltins) names += (names.empty() ? "" : ", ") + std::string(b.name);
  return names;
}

ChatRenderer ChatRenderer::from_templates(const std::map<std::string, std::string>& templates,
                                          const std::string& origin, SpecialTokens tokens) {
  if (templates.empty()) throw TemplateLoadError(origin + ": no chat template");
  ChatRenderer r;
  r.tokens_ = std::move(tokens);
  for (const auto& [name, source] : templates) {
    const std::string where = templates.size() == 1 ? origin : origin + " [" + name + "]";
    Named parsed{parse_template(source, where), template_iterates_content(source)};
    r.templates_.emplace(name, std::move(parsed));
  }
  // The same choice transformers makes for a request without tools.
  CheckpointTemplates as_checkpoint;
  as_checkpoint.templates = templates;
  as_checkpoint.origin = origin;
  const std::string chosen = *choose_template(as_checkpoint, "", false);
  for (const auto& [name, source] : templates)
    if (source == chosen) r.default_name_ = name;
  r.description_ = "jinja (" + origin + ")";
  const jinja::Template& tpl = r.templates_.at(r.default_name_).tpl;
  r.reasoning_style_ = detect_reasoning_style(chosen, probe_generation_prompt(tpl, r.tokens_));
  return r;
}

ChatRenderer ChatRenderer::load(const std::string& flag_value, const std::filesystem::path& dir,
                                std::string* notice) {
  if (!flag_value.empty()) {
    if (auto b = builtin(flag_value)) return *b;
    if (!std::filesystem::is_regular_file(flag_value))
      throw std::invalid_argument("--chat-template " + flag_value +
                                  ": neither a builtin template (" + builtin_names() +
                                  ") nor a readable file");
    // The checkpoint's bos/eos tokens still apply to a template the user brings.
    CheckpointTemplates ckpt = read_checkpoint_templates(dir);
    return from_templates({{"default", read_template_file(flag_value)}}, flag_value,
                          {ckpt.bos_token, ckpt.eos_token});
  }
  CheckpointTemplates ckpt = read_checkpoint_templates(dir);
  if (ckpt.templates.empty()) {
    if (notice)
      *notice = "no chat template in " + dir.string() +
                " (tokenizer_config.json or chat_template.jinja); using the chatml builtin (pass "
                "--chat-template NAME|FILE to choose)";
    return *builtin("chatml");
  }
  return from_templates(ckpt.templates, ckpt.origin, {ckpt.bos_token, ckpt.eos_token});
}

const ChatRenderer::Named& ChatRenderer::choose(bool has_tools) const {
  if (has_tools && templates_.count("tool_use")) return templates_.at("tool_use");
  return templates_.at(default_name_);
}

std::string ChatRenderer::render(const ChatPromptRequest& request) const {
  const bool has_tools = request.tools.is_array() && !request.tools.empty();
  const Named& named = choose(has_tools);
  if (named.takes_content_parts) return render_chat_prompt(named.tpl, request, tokens_);
  ChatPromptRequest joined = request;
  joined.messages = join_content_parts(request.messages);
  return render_chat_prompt(named.tpl, joined, tokens_);
}

std::string ChatRenderer::describe() const {
  return description_;
}

const std::string& ChatRenderer::source() const {
  return templates_.at(default_name_).tpl.source();
}

const std::string& ChatRenderer::tools_source() const {
  return choose(/*has_tools=*/true).tpl.source();
}

}  // namespace ps::chat
