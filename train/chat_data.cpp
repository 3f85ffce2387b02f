#include "train/chat_data.h"

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace ps {
namespace {

using json = nlohmann::json;

const ChatTemplate kChatML(ChatTemplateKind::kChatML);
constexpr const char* kImEnd = "<|im_end|>";

std::string string_field(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) {
    throw std::runtime_error(where + ": expected a string field \"" + key + "\"");
  }
  return it->get<std::string>();
}

ChatExample parse_line(const std::string& line, const std::string& where) {
  json row;
  try {
    row = json::parse(line);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(where + ": not JSON: " + e.what());
  }
  if (!row.is_object()) throw std::runtime_error(where + ": expected a JSON object");
  ChatExample ex;
  if (auto k = row.find("kind"); k != row.end() && k->is_string()) ex.kind = k->get<std::string>();
  if (auto m = row.find("messages"); m != row.end()) {
    if (!m->is_array() || m->empty()) {
      throw std::runtime_error(where + ": \"messages\" must be a non-empty array");
    }
    for (const json& msg : *m) {
      if (!msg.is_object()) throw std::runtime_error(where + ": each message must be an object");
      std::string role = string_field(msg, "role", where);
      if (role != "system" && role != "user" && role != "assistant") {
        throw std::runtime_error(where + ": unknown role \"" + role + "\"");
      }
      ex.messages.push_back({std::move(role), string_field(msg, "content", where)});
    }
  } else {
    ex.messages.push_back({"user", string_field(row, "question", where)});
    ex.messages.push_back({"assistant", string_field(row, "answer", where)});
  }
  if (ex.messages.back().role != "assistant") {
    throw std::runtime_error(where + ": the last message must be the assistant's reply");
  }
  if (ex.messages.size() < 2 || ex.messages[ex.messages.size() - 2].role != "user") {
    throw std::runtime_error(where + ": the reply must follow a user message");
  }
  return ex;
}

}  // namespace

const std::string& ChatExample::question() const {
  return messages[messages.size() - 2].content;
}

const std::string& ChatExample::answer() const {
  return messages.back().content;
}

std::vector<ChatMessage> ChatExample::prompt_messages() const {
  return std::vector<ChatMessage>(messages.begin(), messages.end() - 1);
}

std::vector<ChatExample> read_chat_jsonl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<ChatExample> out;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    out.push_back(parse_line(line, path + ":" + std::to_string(n)));
  }
  if (out.empty()) throw std::runtime_error(path + ": no examples");
  return out;
}

std::vector<int32_t> prompt_tokens(const Tokenizer& tokenizer, const ChatExample& example) {
  return tokenizer.encode(kChatML.render(example.prompt_messages(), true));
}

TokenizedExample tokenize_example(const Tokenizer& tokenizer, const ChatExample& example,
                                  int32_t max_len) {
  // Prompt and reply are encoded apart: the prompt ends in "\n", which the pre-tokenizer never
  // joins with the next letter, so this equals encoding the whole text, and the reply tokens are
  // exactly the ones greedy decoding must produce after the server's prompt.
  // A special token inside a message (say the text "<|im_end|>") would teach the model to end
  // or restart a turn mid-reply.
  for (const ChatMessage& m : example.messages) {
    for (int32_t id : tokenizer.encode(m.content)) {
      if (tokenizer.is_special(id)) {
        throw std::runtime_error("example \"" + example.question() +
                                 "\": a message contains the "
                                 "special token " +
                                 tokenizer.token_bytes(id) + " as text");
      }
    }
  }
  TokenizedExample out;
  out.tokens = prompt_tokens(tokenizer, example);
  const size_t reply_start = out.tokens.size();
  for (int32_t id : tokenizer.encode(example.answer() + kImEnd)) out.tokens.push_back(id);
  if (out.tokens.size() > static_cast<size_t>(max_len)) {
    throw std::runtime_error("example \"" + example.question() + "\" has " +
                             std::to_string(out.tokens.size()) + " tokens, over the limit of " +
                             std::to_string(max_len) + " (raise --max-seq-len)");
  }
  out.targets.assign(out.tokens.size(), kIgnoreTarget);
  for (size_t i = reply_start; i < out.tokens.size(); ++i) out.targets[i - 1] = out.tokens[i];
  return out;
}

std::string tokenizer_corpus(const std::vector<ChatExample>& examples) {
  std::string text;
  for (const ChatExample& ex : examples) {
    for (const ChatMessage& m : ex.messages) {
      text += m.content;
      text += '\n';
    }
  }
  return text;
}

}  // namespace ps
