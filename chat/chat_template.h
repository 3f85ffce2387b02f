#pragma once
// The three formats our own models use, rendered in C++ (ChatML, Llama 3, plain), for offline
// tools (eval). Serving runs the checkpoint's own Jinja template through chat/chat_renderer.h,
// whose builtins write exactly what these do; nothing guesses a format from a template's
// markers any more.
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
