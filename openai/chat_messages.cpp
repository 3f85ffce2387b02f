#include "openai/chat_messages.h"

#include "chat/chat_renderer.h"
#include "openai/json_fields.h"

namespace ps {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using namespace json_fields;  // NOLINT: this file is made of these helpers

void check_content(const json& m, const std::string& where, const std::string& role) {
  auto it = m.find("content");
  const std::string name = where + ".content";
  if (it == m.end() || it->is_null()) {
    // An assistant turn that only called tools has no content; any other turn must say something.
    if (role == "assistant") return;
    reject(name, "'" + name + "' is required for role '" + role + "'");
  }
  if (it->is_string()) return;
  if (!it->is_array()) wrong_type(name, "a string or an array of text parts", *it);
  for (size_t i = 0; i < it->size(); ++i) {
    const json& part = (*it)[i];
    const std::string pname = name + "[" + std::to_string(i) + "]";
    if (!part.is_object()) wrong_type(pname, "an object", part);
    std::optional<std::string> type = get_string(part, "type");
    if (type != "text") {
      reject(pname + ".type", "'" + pname + ".type' is '" + type.value_or("") +
                                  "'; only text content parts are supported");
    }
    if (!get_string(part, "text")) reject(pname + ".text", "'" + pname + ".text' is required");
  }
}

void check_optional(const json& m, const std::string& where, const char* field, bool string) {
  const json* v = find(m, field);
  if (!v) return;
  if (string && !v->is_string()) wrong_type(where + "." + field, "a string", *v);
  if (!string && !v->is_array()) wrong_type(where + "." + field, "an array", *v);
}

void check_messages(const json& body) {
  const json* msgs = find(body, "messages");
  if (!msgs) reject("messages", "'messages' is required");
  if (!msgs->is_array()) wrong_type("messages", "an array", *msgs);
  if (msgs->empty()) reject("messages", "'messages' must contain at least one message");
  for (size_t i = 0; i < msgs->size(); ++i) {
    const json& m = (*msgs)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) wrong_type(where, "an object", m);
    auto role_it = m.find("role");
    if (role_it == m.end() || !role_it->is_string()) {
      reject(where + ".role", "'" + where + ".role' must be a string");
    }
    const std::string role = role_it->get<std::string>();
    if (role != "system" && role != "developer" && role != "user" && role != "assistant" &&
        role != "tool") {
      reject(where + ".role", "'" + where + ".role' is '" + role +
                                  "'; supported roles are system, developer, user, assistant "
                                  "and tool");
    }
    check_content(m, where, role);
    check_optional(m, where, "name", true);
    check_optional(m, where, "tool_call_id", true);
    check_optional(m, where, "reasoning_content", true);
    check_optional(m, where, "tool_calls", false);
  }
}

void check_kwargs(const json& body) {
  const json* kw = find(body, "chat_template_kwargs");
  if (!kw) return;
  if (!kw->is_object()) wrong_type("chat_template_kwargs", "an object", *kw);
  for (const char* own : {"messages", "tools", "documents", "add_generation_prompt"}) {
    if (kw->contains(own)) {
      reject("chat_template_kwargs", std::string("'chat_template_kwargs' may not set '") + own +
                                         "'; use the request field of that name");
    }
  }
}

}  // namespace

chat::ChatPromptRequest parse_chat_prompt_request(const json& body, std::string_view raw) {
  check_messages(body);
  check_kwargs(body);
  chat::ChatPromptRequest r;
  r.add_generation_prompt = get_bool(body, "add_generation_prompt").value_or(true);
  r.continue_final_message = get_bool(body, "continue_final_message").value_or(false);
  if (r.add_generation_prompt && r.continue_final_message) {
    reject("continue_final_message",
           "'continue_final_message' and 'add_generation_prompt' cannot both be true; send "
           "'add_generation_prompt': false to continue the final message");
  }
  const json& last = body["messages"].back();
  if (r.continue_final_message && last["role"] != "assistant") {
    reject("continue_final_message",
           "'continue_final_message' needs the final message to be the assistant's, got '" +
               last["role"].get<std::string>() + "'");
  }
  if (const json* docs = find(body, "documents"); docs && !docs->is_array()) {
    wrong_type("documents", "an array", *docs);
  }

  // The same text again, in order: templates that tojson a message print the client's keys in
  // the client's order, as transformers does.
  const ordered_json ordered = ordered_json::parse(raw);
  r.messages = ordered["messages"];
  for (auto& m : r.messages) {
    if (m["role"] == "developer") m["role"] = "system";
  }
  if (auto it = ordered.find("chat_template_kwargs"); it != ordered.end() && !it->is_null()) {
    r.chat_template_kwargs = *it;
  }
  // OpenAI's reasoning_effort reaches the template as its kwarg of that name, as vLLM passes it
  // (gpt-oss's template writes "Reasoning: <effort>" into its system message); a
  // chat_template_kwargs that sets it itself wins.
  if (const json* effort = find(body, "reasoning_effort"); effort && !effort->is_null()) {
    if (!effort->is_string()) wrong_type("reasoning_effort", "a string", *effort);
    const std::string e = effort->get<std::string>();
    if (e != "none" && e != "minimal" && e != "low" && e != "medium" && e != "high") {
      reject("reasoning_effort",
             "'reasoning_effort' must be one of none, minimal, low, medium, "
             "high; got '" +
                 e + "'");
    }
    if (!r.chat_template_kwargs.contains("reasoning_effort")) {
      r.chat_template_kwargs["reasoning_effort"] = e;
    }
  }
  if (auto it = ordered.find("documents"); it != ordered.end()) r.documents = *it;
  // The template sees the tools as sent (tool_choice decides what the reply may be, not what
  // the prompt shows: vLLM renders them for "none" too).
  if (auto it = ordered.find("tools");
      it != ordered.end() && !it->is_null() && !(it->is_array() && it->empty()))
    r.tools = *it;
  return r;
}

std::variant<std::string, ApiError> render_prompt(const chat::ChatRenderer& renderer,
                                                  const chat::ChatPromptRequest& request) {
  try {
    return renderer.render(request);
  } catch (const chat::ChatPromptError& e) {
    return invalid_param("messages", e.what());
  } catch (const jinja::TemplateError& e) {
    return invalid_param("messages", std::string("the chat template failed: ") + e.what());
  }
}

}  // namespace ps
