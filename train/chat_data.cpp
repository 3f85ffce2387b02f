#include "train/chat_data.h"

#include <fstream>
#include <stdexcept>

namespace ps {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kImEnd = "<|im_end|>";

std::string string_field(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) {
    throw std::runtime_error(std::string("expected a string field \"") + key + "\"");
  }
  return it->get<std::string>();
}

// An assistant tool call: {"function": {"name": string, "arguments": string or object}}.
void check_tool_call(const json& call) {
  if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) {
    throw std::runtime_error("each tool call must be an object with a \"function\" object");
  }
  const json& f = call["function"];
  string_field(f, "name");
  auto args = f.find("arguments");
  if (args == f.end() || !(args->is_string() || args->is_object())) {
    throw std::runtime_error("a tool call's function needs \"arguments\" (a string or object)");
  }
}

void check_message(const json& msg) {
  if (!msg.is_object()) throw std::runtime_error("each message must be an object");
  const std::string role = string_field(msg, "role");
  if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
    throw std::runtime_error("unknown role \"" + role + "\"");
  }
  auto calls = msg.find("tool_calls");
  if (calls != msg.end() && !calls->is_null()) {
    if (role != "assistant") throw std::runtime_error("only assistant messages have tool_calls");
    if (!calls->is_array() || calls->empty()) {
      throw std::runtime_error("\"tool_calls\" must be a non-empty array");
    }
    for (const json& c : *calls) check_tool_call(c);
    auto content = msg.find("content");
    if (content != msg.end() && !content->is_null() && !content->is_string()) {
      throw std::runtime_error("expected a string or null field \"content\"");
    }
    return;
  }
  string_field(msg, "content");
}

void check_tools(const json& tools) {
  if (tools.is_null()) return;
  if (!tools.is_array()) throw std::runtime_error("\"tools\" must be an array");
  for (const json& t : tools) {
    if (!t.is_object() || !t.contains("function") || !t["function"].is_object()) {
      throw std::runtime_error("each tool must be {\"type\": \"function\", \"function\": {...}}");
    }
    string_field(t["function"], "name");
  }
}

ChatExample parse_line(const std::string& line) {
  json row;
  try {
    row = json::parse(line);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(std::string("not JSON: ") + e.what());
  }
  if (!row.is_object()) throw std::runtime_error("expected a JSON object");
  std::string kind;
  if (auto k = row.find("kind"); k != row.end() && k->is_string()) kind = k->get<std::string>();
  json tools = row.contains("tools") ? row["tools"] : json();
  if (auto m = row.find("messages"); m != row.end()) {
    return ChatExample::make(*m, std::move(tools), std::move(kind));
  }
  if (!tools.is_null()) throw std::runtime_error("\"tools\" needs the \"messages\" form");
  return ChatExample::from_turns(
      {{"user", string_field(row, "question")}, {"assistant", string_field(row, "answer")}},
      std::move(kind));
}

}  // namespace

ChatExample ChatExample::make(json messages, json tools, std::string kind) {
  if (!messages.is_array() || messages.empty()) {
    throw std::runtime_error("\"messages\" must be a non-empty array");
  }
  for (const json& m : messages) check_message(m);
  check_tools(tools);
  if (messages.back()["role"] != "assistant") {
    throw std::runtime_error("the last message must be the assistant's reply");
  }
  if (messages.size() < 2 || (messages[messages.size() - 2]["role"] != "user" &&
                              messages[messages.size() - 2]["role"] != "tool")) {
    throw std::runtime_error("the reply must follow a user or tool message");
  }
  ChatExample ex;
  ex.messages = std::move(messages);
  ex.tools = std::move(tools);
  ex.kind = std::move(kind);
  ex.reply = render_chat(tiny_chat_renderer(), ex.messages, ex.tools).reply;
  return ex;
}

ChatExample ChatExample::from_turns(const std::vector<ChatMessage>& turns, std::string kind) {
  json messages = json::array();
  for (const ChatMessage& t : turns) messages.push_back({{"role", t.role}, {"content", t.content}});
  return make(std::move(messages), json(), std::move(kind));
}

std::string ChatExample::question() const {
  return messages[messages.size() - 2]["content"].get<std::string>();
}

json ChatExample::prompt_messages() const {
  return json(messages.begin(), messages.end() - 1);
}

std::vector<ChatExample> read_chat_jsonl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<ChatExample> out;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      out.push_back(parse_line(line));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(path + ":" + std::to_string(n) + ": " + e.what());
    }
  }
  if (out.empty()) throw std::runtime_error(path + ": no examples");
  return out;
}

std::vector<int32_t> prompt_tokens(const Tokenizer& tokenizer, const ChatExample& example,
                                   const chat::ChatRenderer& renderer) {
  return tokenizer.encode(render_chat(renderer, example.messages, example.tools).prompt);
}

TokenizedExample tokenize_example(const Tokenizer& tokenizer, const ChatExample& example,
                                  int32_t max_len, const chat::ChatRenderer& renderer) {
  // Prompt and reply are encoded apart: the prompt ends in "\n", which the pre-tokenizer never
  // joins with the next letter (and <tool_call> is an added token), so this equals encoding the
  // whole text, and the reply tokens are exactly the ones greedy decoding must produce after
  // the server's prompt.
  // A special token inside a message (say the text "<|im_end|>") would teach the model to end
  // or restart a turn mid-reply.
  for (const json& m : example.messages) {
    const std::string text = m.dump();
    for (int32_t id : tokenizer.encode(text)) {
      if (tokenizer.is_special(id)) {
        throw std::runtime_error("example \"" + example.question() +
                                 "\": a message contains the special token " +
                                 tokenizer.token_bytes(id) + " as text");
      }
    }
  }
  const RenderedChat r = render_chat(renderer, example.messages, example.tools);
  TokenizedExample out;
  out.tokens = tokenizer.encode(r.prompt);
  const size_t reply_start = out.tokens.size();
  for (int32_t id : tokenizer.encode(r.reply + kImEnd)) out.tokens.push_back(id);
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
    const RenderedChat r = render_chat(tiny_chat_renderer(), ex.messages, ex.tools);
    text += r.prompt;
    text += r.reply;
    text += '\n';
  }
  return text;
}

}  // namespace ps
