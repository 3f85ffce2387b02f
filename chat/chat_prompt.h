#pragma once
// The prompt for a chat request, rendered as transformers' apply_chat_template renders it:
// the template sees messages (as given: content parts, name, tool_calls, reasoning_content
// untouched), tools and documents (None when absent), add_generation_prompt, the tokenizer's
// bos_token/eos_token, and the request's chat_template_kwargs. continue_final_message, as
// vLLM and transformers define it, renders without a generation prompt and cuts the text
// right after the final message's content so the model continues that message.
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/jinja_template.h"

namespace ps::chat {

// A request the template cannot serve as asked (a client error, HTTP 400).
struct ChatPromptError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct ChatPromptRequest {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;      // null or absent: the template sees tools=None
  nlohmann::ordered_json documents;  // likewise
  nlohmann::ordered_json chat_template_kwargs = nlohmann::ordered_json::object();
  bool add_generation_prompt = true;
  bool continue_final_message = false;
};

struct SpecialTokens {
  std::string bos_token;
  std::string eos_token;
};

// The render context transformers passes (also what tests/e2e/chat_template_corpus.sh feeds).
nlohmann::ordered_json chat_context(const ChatPromptRequest& request, const SpecialTokens& tokens);

// Throws ChatPromptError for contradictory options, and jinja::TemplateError when the template
// fails (its raise_exception included).
std::string render_chat_prompt(const jinja::Template& tpl, const ChatPromptRequest& request,
                               const SpecialTokens& tokens, const jinja::Limits& limits = {});

// For a template that expects string content (see Template::iterates_message_content), the
// messages with OpenAI content parts turned into strings, their text parts joined by "\n" as
// vLLM joins them; other fields untouched. Throws ChatPromptError for a non-text part.
nlohmann::ordered_json flatten_content_parts(const nlohmann::ordered_json& messages);

// transformers' cut for continue_final_message: `rendered` ends right after the final
// message's text (keeping its trailing spaces if the template kept them).
std::string cut_after_final_message(const std::string& rendered,
                                    const nlohmann::ordered_json& messages);

}  // namespace ps::chat
