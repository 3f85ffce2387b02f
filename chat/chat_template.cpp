#include "chat/chat_template.h"

#include <algorithm>
#include <cctype>

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
