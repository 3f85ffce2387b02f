#pragma once
// The one way serve, chat and /tokenize turn a chat request into prompt text.
//
// A renderer holds either the checkpoint's own Jinja templates (tokenizer_config.json's
// chat_template, or chat_template.jinja beside it), a file the user names (--chat-template
// FILE), or one of the builtins (chatml, llama3, plain). A builtin is used only when named or
// when the checkpoint ships no template (with a notice): a checkpoint's template is never
// replaced by a guess, and one that fails to parse is a load error naming the file and line.
//
// Content parts follow vLLM's "auto" content format: a template that loops over a message's
// content gets the parts as sent; any other template gets the text parts joined by "\n", as
// a string.
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "chat/chat_prompt.h"
#include "chat/jinja_template.h"
#include "chat/reasoning_parser.h"

namespace ps::chat {

class ChatRenderer {
 public:
  // "chatml" | "llama3" | "plain" (case-insensitive); nullopt for anything else.
  static std::optional<ChatRenderer> builtin(const std::string& name);
  static std::string builtin_names();  // "chatml, llama3, plain"

  // Named templates (a single one is "default"), parsed now; `origin` names their file in
  // messages and in describe(). Throws TemplateLoadError naming the line of a syntax error.
  static ChatRenderer from_templates(const std::map<std::string, std::string>& templates,
                                     const std::string& origin, SpecialTokens tokens);

  // What `--chat-template VALUE` (empty when not given) means for checkpoint `dir`: a builtin
  // name, else a template file; without the flag the checkpoint's templates, else chatml with
  // `*notice` saying so. Throws TemplateLoadError (unreadable or unparsable template) and
  // std::invalid_argument (a value that is neither a builtin nor a file).
  static ChatRenderer load(const std::string& flag_value, const std::filesystem::path& dir,
                           std::string* notice);

  // The prompt text. Throws ChatPromptError (contradictory options, a message the template
  // cannot show) and jinja::TemplateError (the template failed, raise_exception included).
  std::string render(const ChatPromptRequest& request) const;

  // For the ready line: "jinja (<file>)" or "chatml (builtin)".
  std::string describe() const;
  // The default template's Jinja source.
  const std::string& source() const;
  // The source of the template a request with tools renders with ("tool_use" when present).
  const std::string& tools_source() const;
  // The reasoning parser the template calls for (--reasoning-parser auto); nullopt: none.
  std::optional<ReasoningStyle> detected_reasoning_style() const { return reasoning_style_; }

 private:
  struct Named {
    jinja::Template tpl;
    bool takes_content_parts = false;
  };
  ChatRenderer() = default;
  const Named& choose(bool has_tools) const;

  std::map<std::string, Named> templates_;
  std::string default_name_;
  std::string description_;
  SpecialTokens tokens_;
  std::optional<ReasoningStyle> reasoning_style_;
};

// vLLM's "auto" content format test: does `source` loop over a message's content?
bool template_iterates_content(const std::string& source);

// Messages with each content-part list joined into one string (text parts, "\n" between), and
// null content as "".
nlohmann::ordered_json join_content_parts(const nlohmann::ordered_json& messages);

}  // namespace ps::chat
