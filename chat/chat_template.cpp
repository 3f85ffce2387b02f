#include "chat/chat_template.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace ps {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Jinja's `| trim` as Llama 3's template applies it to each message.
std::string_view trim(std::string_view s) {
  const char* ws = " \t\n\r\f\v";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

// The template text from tokenizer_config.json: a string, or a list of named templates where
// "default" is the chat one (tool-use variants are not ours to pick).
std::optional<std::string> template_text(const nlohmann::json& config) {
  auto it = config.find("chat_template");
  if (it == config.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    std::optional<std::string> first;
    for (const auto& entry : *it) {
      if (!entry.is_object()) continue;
      auto t = entry.find("template");
      if (t == entry.end() || !t->is_string()) continue;
      if (!first) first = t->get<std::string>();
      auto n = entry.find("name");
      if (n != entry.end() && n->is_string() && n->get<std::string>() == "default") {
        return t->get<std::string>();
      }
    }
    return first;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ChatTemplate> ChatTemplate::from_name(std::string_view name) {
  std::string n = lower(name);
  if (n == "chatml") return ChatTemplate(ChatTemplateKind::kChatML);
  if (n == "llama3" || n == "llama-3") return ChatTemplate(ChatTemplateKind::kLlama3);
  if (n == "plain") return ChatTemplate(ChatTemplateKind::kPlain);
  return std::nullopt;
}

std::string ChatTemplate::known_names() {
  return "chatml, llama3, plain";
}

std::optional<ChatTemplate> ChatTemplate::detect(const std::string& tokenizer_config_json) {
  nlohmann::json config = nlohmann::json::parse(tokenizer_config_json, nullptr,
                                                /*allow_exceptions=*/false);
  if (!config.is_object()) return std::nullopt;
  std::optional<std::string> text = template_text(config);
  if (!text) return std::nullopt;
  // Llama 3 first: its markers are unambiguous, while a ChatML marker could appear in a
  // template's comment.
  if (text->find("<|start_header_id|>") != std::string::npos) {
    return ChatTemplate(ChatTemplateKind::kLlama3);
  }
  if (text->find("<|im_start|>") != std::string::npos) {
    return ChatTemplate(ChatTemplateKind::kChatML);
  }
  if (text->find("用户") != std::string::npos) return ChatTemplate(ChatTemplateKind::kPlain);
  return std::nullopt;
}

const char* ChatTemplate::name() const {
  switch (kind_) {
    case ChatTemplateKind::kChatML:
      return "chatml";
    case ChatTemplateKind::kLlama3:
      return "llama3";
    case ChatTemplateKind::kPlain:
      return "plain";
  }
  return "chatml";
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages,
                                 bool add_generation_prompt) const {
  std::string out;
  switch (kind_) {
    case ChatTemplateKind::kChatML:
      for (const auto& m : messages) {
        out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      }
      if (add_generation_prompt) out += "<|im_start|>assistant\n";
      break;
    case ChatTemplateKind::kLlama3:
      // The reference template puts bos_token before the first message; our tokenizer does not
      // add one itself.
      if (!messages.empty()) out += "<|begin_of_text|>";
      for (const auto& m : messages) {
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n";
        out += trim(m.content);
        out += "<|eot_id|>";
      }
      if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      break;
    case ChatTemplateKind::kPlain:
      // A system message is a preamble line: the format has no speaker name for it.
      for (const auto& m : messages) {
        if (m.role == "user") {
          out += "用户:" + m.content + "\n";
        } else if (m.role == "assistant") {
          out += "助手:" + m.content + "\n";
        } else {
          out += m.content + "\n";
        }
      }
      if (add_generation_prompt) out += "助手:";
      break;
  }
  return out;
}

}  // namespace ps
