#pragma once
// Chat templates: turn a list of chat messages into the prompt text a model was trained on.
// We do not run Jinja; we recognise the few formats our models use and render them in C++, and
// a test checks the output against Python's Jinja2 rendering of the reference template.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ps {

struct ChatMessage {
  std::string role;  // "system" | "user" | "assistant"
  std::string content;
};

enum class ChatTemplateKind {
  kChatML,  // <|im_start|>role\n...<|im_end|>\n (Qwen, MiniMind)
  kLlama3,  // <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>
  kPlain,   // 用户:...\n助手:... (plain-text dialogue format)
};

class ChatTemplate {
 public:
  explicit ChatTemplate(ChatTemplateKind kind) : kind_(kind) {}

  // "chatml" | "llama3" | "plain" (case-insensitive); nullopt for anything else.
  static std::optional<ChatTemplate> from_name(std::string_view name);
  // The names from_name accepts, for error messages: "chatml, llama3, plain".
  static std::string known_names();

  // Recognises the Jinja `chat_template` of a tokenizer_config.json (a string, or HF's list of
  // {name, template} where "default" wins) by the markers it contains. nullopt when the text is
  // not JSON, has no template, or the template is none of ours: the caller then needs a
  // --chat-template flag or a default.
  static std::optional<ChatTemplate> detect(const std::string& tokenizer_config_json);

  ChatTemplateKind kind() const { return kind_; }
  const char* name() const;

  // The prompt text for `messages`; with `add_generation_prompt` it ends where the assistant's
  // reply begins. Special tokens appear as their text (e.g. "<|im_start|>"), which the
  // tokenizer maps to their ids.
  std::string render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

 private:
  ChatTemplateKind kind_;
};

}  // namespace ps
