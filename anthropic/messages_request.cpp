#include "anthropic/messages_request.h"

#include <string>

#include "chat/jinja_value.h"
#include "openai/json_fields.h"

namespace ps::anthropic {
namespace {

using nlohmann::json;
using namespace json_fields;  // NOLINT: this file is made of these helpers

// The text of a block list that may only hold text blocks (system, a tool_result's content).
std::string text_of_blocks(const json& v, const std::string& name) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) wrong_type(name, "a string or an array of text blocks", v);
  std::string text;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string where = name + "[" + std::to_string(i) + "]";
    const json& b = v[i];
    if (!b.is_object()) wrong_type(where, "an object", b);
    const std::string type = get_string(b, "type").value_or("");
    if (type != "text") {
      reject(where + ".type",
             "'" + where + ".type' is '" + type + "'; only text blocks are supported here");
    }
    auto t = get_string(b, "text");
    if (!t) reject(where + ".text", "'" + where + ".text' is required");
    if (!text.empty()) text += "\n";
    text += *t;
  }
  return text;
}

// A tool_use block's input as the arguments text of the call it becomes, written as the chat
// templates' tojson writes an object (Python's json.dumps: ", " and ": ", the client's key
// order): the text a model was trained to see for its own calls. (With nlohmann's compact,
// key-sorted dump the shipped model answered a get_weather result with another temperature
// than the tool's.)
std::string arguments_text(const nlohmann::ordered_json& input) {
  return jinja::to_json_text(jinja::from_json(input), jinja::default_json_style(false, ""));
}

// One Messages turn as the OpenAI messages it becomes (appended to `out`). `om` is the same
// turn parsed with its keys in the client's order.
void translate_turn(const json& m, const nlohmann::ordered_json& om, size_t index, json& out) {
  const std::string where = "messages[" + std::to_string(index) + "]";
  if (!m.is_object()) wrong_type(where, "an object", m);
  const std::string role = get_string(m, "role").value_or("");
  if (role != "user" && role != "assistant" && role != "system") {
    reject(where + ".role",
           "'" + where + ".role' is '" + role + "'; it must be 'user', 'assistant' or 'system'");
  }
  const json* content = find(m, "content");
  if (!content) reject(where + ".content", "'" + where + ".content' is required");
  // A system turn inside the conversation (Claude Code sends one after the first user turn):
  // text only, a system message where it stands.
  if (role == "system") {
    out.push_back({{"role", "system"}, {"content", text_of_blocks(*content, where + ".content")}});
    return;
  }
  if (content->is_string()) {
    out.push_back({{"role", role}, {"content", *content}});
    return;
  }
  if (!content->is_array())
    wrong_type(where + ".content", "a string or an array of blocks", *content);
  json parts = json::array();
  json calls = json::array();
  for (size_t i = 0; i < content->size(); ++i) {
    const std::string bw = where + ".content[" + std::to_string(i) + "]";
    const json& b = (*content)[i];
    if (!b.is_object()) wrong_type(bw, "an object", b);
    const std::string type = get_string(b, "type").value_or("");
    if (type == "text") {
      auto t = get_string(b, "text");
      if (!t) reject(bw + ".text", "'" + bw + ".text' is required");
      parts.push_back({{"type", "text"}, {"text", *t}});
    } else if (type == "tool_use" && role == "assistant") {
      auto id = get_string(b, "id");
      auto name = get_string(b, "name");
      if (!id || !name) reject(bw, "'" + bw + "' (tool_use) needs 'id' and 'name'");
      const json* input = find(b, "input");
      if (input && !input->is_object()) wrong_type(bw + ".input", "an object", *input);
      calls.push_back(
          {{"id", *id},
           {"type", "function"},
           {"function",
            {{"name", *name},
             {"arguments", input ? arguments_text(om["content"][i]["input"]) : "{}"}}}});
    } else if (type == "tool_result" && role == "user") {
      auto id = get_string(b, "tool_use_id");
      if (!id) reject(bw + ".tool_use_id", "'" + bw + ".tool_use_id' is required");
      const json* c = find(b, "content");
      std::string text = c ? text_of_blocks(*c, bw + ".content") : "";
      if (get_bool(b, "is_error").value_or(false)) text = "Error: " + text;
      // A tool message answers the call; it comes before the turn's own text, as the calls
      // came before it in the conversation.
      out.push_back({{"role", "tool"}, {"tool_call_id", *id}, {"content", text}});
    } else if (type == "thinking" || type == "redacted_thinking") {
      // An earlier turn's reasoning: chat templates drop past reasoning, and so does this.
    } else {
      reject(bw + ".type", "'" + bw + ".type' is '" + type + "'; supported blocks are text, " +
                               "tool_use (assistant), tool_result (user) and thinking");
    }
  }
  if (parts.empty() && calls.empty()) return;  // a user turn of tool results only
  json msg = {{"role", role}};
  msg["content"] = parts.empty() ? json(nullptr) : parts;
  if (!calls.empty()) msg["tool_calls"] = calls;
  out.push_back(std::move(msg));
}

json translate_tools(const json& tools) {
  if (!tools.is_array()) wrong_type("tools", "an array", tools);
  json out = json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string where = "tools[" + std::to_string(i) + "]";
    const json& t = tools[i];
    if (!t.is_object()) wrong_type(where, "an object", t);
    // Anthropic's server tools (web_search_..., bash_..., text_editor_...) carry a type; a
    // client tool has none or "custom".
    const std::string type = get_string(t, "type").value_or("custom");
    if (type != "custom") {
      reject(where + ".type", "'" + where + ".type' is '" + type +
                                  "'; this server runs only client tools (no type, or 'custom')");
    }
    auto name = get_string(t, "name");
    if (!name) reject(where + ".name", "'" + where + ".name' is required");
    const json* schema = find(t, "input_schema");
    if (!schema) reject(where + ".input_schema", "'" + where + ".input_schema' is required");
    if (!schema->is_object()) wrong_type(where + ".input_schema", "an object", *schema);
    json fn = {{"name", *name}, {"parameters", *schema}};
    if (auto d = get_string(t, "description")) fn["description"] = *d;
    out.push_back({{"type", "function"}, {"function", fn}});
  }
  return out;
}

json translate_tool_choice(const json& c, json& chat) {
  if (!c.is_object()) wrong_type("tool_choice", "an object", c);
  const std::string type = get_string(c, "type").value_or("");
  if (auto off = get_bool(c, "disable_parallel_tool_use")) chat["parallel_tool_calls"] = !*off;
  if (type == "auto") return "auto";
  if (type == "any") return "required";
  if (type == "none") return "none";
  if (type == "tool") {
    auto name = get_string(c, "name");
    if (!name) reject("tool_choice.name", "'tool_choice.name' is required for type 'tool'");
    return {{"type", "function"}, {"function", {{"name", *name}}}};
  }
  reject("tool_choice.type",
         "'tool_choice.type' is '" + type + "'; it must be 'auto', 'any', 'tool' or 'none'");
}

json translate(std::string_view text, MessagesRoute route) {
  const json body = parse_object(text);
  json chat = json::object();
  if (auto model = get_string(body, "model")) chat["model"] = *model;
  const json* max_tokens = find(body, "max_tokens");
  if (route == MessagesRoute::kCreate) {
    if (!max_tokens) reject("max_tokens", "'max_tokens' is required");
    if (as_int(*max_tokens, "max_tokens") < 1) reject("max_tokens", "'max_tokens' must be >= 1");
    chat["max_tokens"] = *max_tokens;
  }
  json messages = json::array();
  if (const json* system = find(body, "system")) {
    messages.push_back({{"role", "system"}, {"content", text_of_blocks(*system, "system")}});
  }
  const json* turns = find(body, "messages");
  if (!turns) reject("messages", "'messages' is required");
  if (!turns->is_array()) wrong_type("messages", "an array", *turns);
  if (turns->empty()) reject("messages", "'messages' must contain at least one message");
  // The body again with its keys in the client's order, for tool_use inputs (arguments_text).
  const auto ordered = nlohmann::ordered_json::parse(text);
  for (size_t i = 0; i < turns->size(); ++i) {
    translate_turn((*turns)[i], ordered["messages"][i], i, messages);
  }
  chat["messages"] = std::move(messages);

  if (const json* tools = find(body, "tools"); tools && !tools->empty()) {
    chat["tools"] = translate_tools(*tools);
  }
  if (const json* choice = find(body, "tool_choice")) {
    json c = translate_tool_choice(*choice, chat);
    // A choice without tools means nothing to call: chat's "none" is the same answer.
    if (chat.contains("tools")) chat["tool_choice"] = std::move(c);
  }
  if (const json* stop = find(body, "stop_sequences")) {
    if (!stop->is_array()) wrong_type("stop_sequences", "an array of strings", *stop);
    if (!stop->empty()) chat["stop"] = *stop;
  }
  // Sampling, and pagedserve's scheduling fields (priority, deadlines), passed as chat takes them.
  for (const char* field :
       {"temperature", "top_p", "top_k", "priority", "max_queue_seconds", "max_request_seconds"}) {
    if (const json* v = find(body, field)) chat[field] = *v;
  }
  if (const json* thinking = find(body, "thinking")) {
    if (!thinking->is_object()) wrong_type("thinking", "an object", *thinking);
    const std::string type = get_string(*thinking, "type").value_or("");
    if (type != "enabled" && type != "disabled" && type != "adaptive") {
      reject("thinking.type",
             "'thinking.type' is '" + type + "'; it must be 'enabled', 'disabled' or 'adaptive'");
    }
    // adaptive: the model decides whether to think, which is the template's default.
    if (type != "adaptive") chat["chat_template_kwargs"] = {{"enable_thinking", type == "enabled"}};
  }
  if (route == MessagesRoute::kCreate) {
    if (auto stream = get_bool(body, "stream")) chat["stream"] = *stream;
  }
  if (const json* meta = find(body, "metadata"); meta && meta->is_object()) {
    if (auto user = get_string(*meta, "user_id")) chat["user"] = *user;
  }
  return chat;
}

}  // namespace

std::variant<json, ApiError> translate_messages_request(std::string_view body,
                                                        MessagesRoute route) {
  return guarded<json>([&] { return translate(body, route); });
}

}  // namespace ps::anthropic
