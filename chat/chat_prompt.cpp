#include "chat/chat_prompt.h"

namespace ps::chat {

namespace {

bool is_python_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string strip(const std::string& s, bool left, bool right) {
  size_t b = 0, e = s.size();
  if (left)
    while (b < e && is_python_space(s[b])) ++b;
  if (right)
    while (e > b && is_python_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// The text continue_final_message continues: the content string, or the last text part.
std::string final_message_text(const nlohmann::ordered_json& messages) {
  if (!messages.is_array() || messages.empty())
    throw ChatPromptError("continue_final_message needs at least one message");
  const auto& last = messages.back();
  if (!last.is_object() || !last.contains("content"))
    throw ChatPromptError("continue_final_message: the final message has no content to continue");
  const auto& content = last["content"];
  if (content.is_string()) return content.get<std::string>();
  if (content.is_array()) {
    for (auto it = content.rbegin(); it != content.rend(); ++it)
      if (it->is_object() && it->contains("text") && (*it)["text"].is_string())
        return (*it)["text"].get<std::string>();
  }
  throw ChatPromptError(
      "continue_final_message is set but we could not find any text to continue in the final "
      "message");
}

}  // namespace

nlohmann::ordered_json chat_context(const ChatPromptRequest& request, const SpecialTokens& tokens) {
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  ctx["messages"] = request.messages;
  ctx["tools"] = request.tools;  // null stays None; a list is passed as given, even empty
  ctx["documents"] = request.documents;
  ctx["add_generation_prompt"] = request.add_generation_prompt && !request.continue_final_message;
  ctx["bos_token"] = tokens.bos_token;
  ctx["eos_token"] = tokens.eos_token;
  if (!request.chat_template_kwargs.is_null() && !request.chat_template_kwargs.is_object())
    throw ChatPromptError("chat_template_kwargs must be an object");
  if (request.chat_template_kwargs.is_object()) {
    for (auto it = request.chat_template_kwargs.begin(); it != request.chat_template_kwargs.end();
         ++it) {
      // transformers passes these as named arguments; a kwarg of the same name is an error there.
      static const char* reserved[] = {"messages", "tools", "documents", "add_generation_prompt"};
      for (const char* r : reserved)
        if (it.key() == r)
          throw ChatPromptError(std::string("chat_template_kwargs may not set '") + r +
                                "'; use the request field instead");
      ctx[it.key()] = it.value();
    }
  }
  return ctx;
}

nlohmann::ordered_json flatten_content_parts(const nlohmann::ordered_json& messages) {
  nlohmann::ordered_json out = messages;
  if (!out.is_array()) return out;
  for (auto& m : out) {
    if (!m.is_object() || !m.contains("content") || !m["content"].is_array()) continue;
    std::string text;
    bool first = true;
    for (const auto& part : m["content"]) {
      if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
          !part["text"].is_string())
        throw ChatPromptError(
            "this model's chat template takes text content only; a content part of type '" +
            (part.is_object() ? part.value("type", std::string("?")) : std::string("?")) +
            "' cannot be rendered");
      if (!first) text += "\n";
      first = false;
      text += part["text"].get<std::string>();
    }
    m["content"] = text;
  }
  return out;
}

std::string cut_after_final_message(const std::string& rendered,
                                    const nlohmann::ordered_json& messages) {
  const std::string text = final_message_text(messages);
  const std::string stripped = strip(text, true, true);
  size_t at = rendered.rfind(stripped);
  if (at == std::string::npos)
    throw ChatPromptError(
        "continue_final_message is set but the final message does not appear in the chat after "
        "applying the chat template (the template changes or drops part of it)");
  // transformers keeps the message's trailing spaces only when the template kept them too.
  const std::string lstripped = strip(text, true, false);
  if (rendered.compare(at, lstripped.size(), text) == 0 && lstripped.size() == text.size())
    return rendered.substr(0, at + lstripped.size());
  return rendered.substr(0, at + stripped.size());
}

std::string render_chat_prompt(const jinja::Template& tpl, const ChatPromptRequest& request,
                               const SpecialTokens& tokens, const jinja::Limits& limits) {
  if (request.continue_final_message && request.add_generation_prompt)
    throw ChatPromptError("continue_final_message and add_generation_prompt cannot both be true");
  std::string rendered = tpl.render(chat_context(request, tokens), limits);
  if (!request.continue_final_message) return rendered;
  return cut_after_final_message(rendered, request.messages);
}

}  // namespace ps::chat
