#include "responses/responses_request.h"

#include <map>
#include <string>

#include "openai/json_fields.h"

namespace ps::responses {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using namespace json_fields;  // NOLINT: this file is made of these helpers

std::string at(const std::string& name, size_t i) {
  return name + "[" + std::to_string(i) + "]";
}

// The text of a message's content: a string, or parts of type input_text / output_text (and an
// assistant's refusal). Images, files and audio are refused by name: the model reads text only.
std::string content_text(const json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) wrong_type(where, "a string or an array of content parts", content);
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string pw = at(where, i);
    const json& part = content[i];
    if (!part.is_object()) wrong_type(pw, "an object", part);
    const std::string type = get_string(part, "type").value_or("");
    const char* field = type == "refusal" ? "refusal" : "text";
    if (type != "input_text" && type != "output_text" && type != "text" && type != "refusal") {
      reject(pw + ".type", "'" + pw + ".type' is '" + type +
                               "'; this server reads text parts only (input_text, output_text)");
    }
    auto t = get_string(part, field);
    if (!t) reject(pw + "." + field, "'" + pw + "." + field + "' is required");
    text += *t;
  }
  return text;
}

std::string required_string(const json& item, const std::string& where, const char* field) {
  auto v = get_string(item, field);
  if (!v) reject(where + "." + field, "'" + where + "." + field + "' is required");
  return *v;
}

// One input item as chat messages, appended to `out`. A function_call joins the assistant turn
// it follows (a reply's message and its calls are one chat turn); a reasoning item is dropped,
// as chat templates drop an earlier turn's reasoning.
void translate_item(const json& item, size_t index, ordered_json& out) {
  const std::string where = at("input", index);
  if (!item.is_object()) wrong_type(where, "an object", item);
  const std::string type = get_string(item, "type").value_or("message");
  if (type == "message") {
    std::string role = get_string(item, "role").value_or("");
    if (role != "user" && role != "assistant" && role != "system" && role != "developer") {
      reject(where + ".role", "'" + where + ".role' is '" + role +
                                  "'; it must be 'user', 'assistant', 'system' or 'developer'");
    }
    const json* content = find(item, "content");
    if (!content) reject(where + ".content", "'" + where + ".content' is required");
    out.push_back({{"role", role}, {"content", content_text(*content, where + ".content")}});
  } else if (type == "function_call") {
    ordered_json call = {{"id", required_string(item, where, "call_id")},
                         {"type", "function"},
                         {"function",
                          {{"name", required_string(item, where, "name")},
                           {"arguments", required_string(item, where, "arguments")}}}};
    if (!out.empty() && out.back()["role"] == "assistant") {
      ordered_json& turn = out.back();
      if (!turn.contains("tool_calls")) turn["tool_calls"] = ordered_json::array();
      turn["tool_calls"].push_back(std::move(call));
    } else {
      out.push_back({{"role", "assistant"},
                     {"content", nullptr},
                     {"tool_calls", ordered_json::array({std::move(call)})}});
    }
  } else if (type == "function_call_output") {
    const json* output = find(item, "output");
    if (!output) reject(where + ".output", "'" + where + ".output' is required");
    out.push_back({{"role", "tool"},
                   {"tool_call_id", required_string(item, where, "call_id")},
                   {"content", content_text(*output, where + ".output")}});
  } else if (type == "reasoning") {
    // An earlier reply's reasoning, passed back as clients must: nothing to render.
  } else if (type == "item_reference") {
    reject(where + ".type", "'" + where +
                                ".type' is 'item_reference'; this server keeps no items by id: "
                                "send the items themselves, or previous_response_id");
  } else {
    reject(where + ".type", "'" + where + ".type' is '" + type +
                                "'; supported input items are message, function_call, "
                                "function_call_output and reasoning");
  }
}

ordered_json translate_input(const json& input) {
  ordered_json out = ordered_json::array();
  if (input.is_string()) {
    out.push_back({{"role", "user"}, {"content", input}});
    return out;
  }
  if (!input.is_array()) wrong_type("input", "a string or an array of items", input);
  for (size_t i = 0; i < input.size(); ++i) translate_item(input[i], i, out);
  return out;
}

// One function tool as a chat tool (appended to `out`) and as the response object lists it.
// `ordered` is the same tool with the client's key order, for the parameters' schema.
void add_function_tool(const json& t, const ordered_json& ordered, const std::string& where,
                       ordered_json& out, json& echo) {
  const std::string name = required_string(t, where, "name");
  ordered_json fn = {{"name", name}};
  if (auto d = get_string(t, "description")) fn["description"] = *d;
  const json* params = find(t, "parameters");
  if (params && !params->is_object()) wrong_type(where + ".parameters", "an object", *params);
  if (params) fn["parameters"] = ordered["parameters"];
  const std::optional<bool> strict = get_bool(t, "strict");
  if (strict) fn["strict"] = *strict;
  out.push_back({{"type", "function"}, {"function", std::move(fn)}});
  echo.push_back({{"type", "function"},
                  {"name", name},
                  {"description", t.contains("description") ? t["description"] : json(nullptr)},
                  {"parameters", params ? *params : json(nullptr)},
                  {"strict", strict ? json(*strict) : json(nullptr)}});
}

// Function tools, and namespaces of them (Codex groups its sub-agent tools so), as chat tools;
// `echo` gets the list the response object repeats and `namespaces` each namespaced function's
// namespace, which its calls carry back. Every other tool type is refused by name.
ordered_json translate_function_tools(const json& tools, const ordered_json& ordered, json& echo,
                                      std::map<std::string, std::string>& namespaces) {
  if (!tools.is_array()) wrong_type("tools", "an array", tools);
  ordered_json out = ordered_json::array();
  json unused = json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string where = at("tools", i);
    const json& t = tools[i];
    if (!t.is_object()) wrong_type(where, "an object", t);
    const std::string type = get_string(t, "type").value_or("");
    if (type == "function") {
      add_function_tool(t, ordered[i], where, out, echo);
      continue;
    }
    if (type != "namespace") {
      reject(where + ".type", "'" + where + ".type' is '" + type +
                                  "'; this server runs only function tools (and namespaces of "
                                  "them), no built-in, MCP or custom tools");
    }
    const std::string ns = required_string(t, where, "name");
    const json* members = find(t, "tools");
    if (!members || !members->is_array()) wrong_type(where + ".tools", "an array", t["tools"]);
    for (size_t j = 0; j < members->size(); ++j) {
      const std::string mw = at(where + ".tools", j);
      const json& m = (*members)[j];
      if (!m.is_object()) wrong_type(mw, "an object", m);
      const std::string mtype = get_string(m, "type").value_or("");
      if (mtype != "function") {
        reject(mw + ".type", "'" + mw + ".type' is '" + mtype + "'; a namespace may hold only " +
                                 "function tools here");
      }
      add_function_tool(m, ordered[i]["tools"][j], mw, out, unused);
      namespaces[m["name"].get<std::string>()] = ns;
    }
    echo.push_back(t);
  }
  return out;
}

ordered_json translate_tool_choice(const json& c) {
  if (c.is_string()) {
    const std::string s = c.get<std::string>();
    if (s != "auto" && s != "none" && s != "required") {
      reject("tool_choice", "'tool_choice' is '" + s + "'; it must be auto, none or required");
    }
    return s;
  }
  if (!c.is_object()) wrong_type("tool_choice", "a string or an object", c);
  const std::string type = get_string(c, "type").value_or("");
  if (type != "function") {
    reject("tool_choice.type", "'tool_choice.type' is '" + type + "'; only function is supported");
  }
  return {{"type", "function"},
          {"function", {{"name", required_string(c, "tool_choice", "name")}}}};
}

// text.format as chat's response_format; `ordered` keeps the schema's key order.
ordered_json translate_format(const json& format, const ordered_json& ordered) {
  if (!format.is_object()) wrong_type("text.format", "an object", format);
  const std::string type = get_string(format, "type").value_or("");
  if (type == "text" || type == "json_object") return {{"type", type}};
  if (type != "json_schema") {
    reject("text.format.type",
           "'text.format.type' is '" + type + "'; it must be text, json_object or json_schema");
  }
  const std::string name = required_string(format, "text.format", "name");
  if (!find(format, "schema")) reject("text.format.schema", "'text.format.schema' is required");
  ordered_json js = {{"name", name}, {"schema", ordered["schema"]}};
  if (auto strict = get_bool(format, "strict")) js["strict"] = *strict;
  return {{"type", "json_schema"}, {"json_schema", std::move(js)}};
}

// The Responses fields this server cannot honour are refused rather than silently ignored.
void refuse_unsupported(const json& body) {
  if (get_bool(body, "background").value_or(false)) {
    reject("background", "'background' responses are not supported; drop the field");
  }
  if (find(body, "conversation")) {
    reject("conversation", "'conversation' is not supported; use previous_response_id");
  }
  if (find(body, "prompt")) reject("prompt", "'prompt' (stored prompt templates) is not supported");
  if (auto t = get_string(body, "truncation"); t && *t != "disabled") {
    reject("truncation", "'truncation' is '" + *t + "'; only 'disabled' is supported");
  }
}

ResponsesRequest translate(std::string_view text) {
  const json body = parse_object(text);
  const ordered_json ordered = ordered_json::parse(text);
  refuse_unsupported(body);
  ResponsesRequest r;
  ordered_json& chat = r.chat;
  json& echo = r.echo;
  chat = ordered_json::object();
  echo = json::object();
  if (auto model = get_string(body, "model")) chat["model"] = *model;

  const json* input = find(body, "input");
  if (!input) reject("input", "'input' is required");
  r.input_messages = translate_input(*input);
  if (r.input_messages.empty()) reject("input", "'input' holds no message or tool output");

  r.instructions = nullptr;
  echo["instructions"] = nullptr;
  if (auto instr = get_string(body, "instructions")) {
    r.instructions = {{"role", "system"}, {"content", *instr}};
    echo["instructions"] = *instr;
  } else if (find(body, "instructions")) {
    wrong_type("instructions", "a string", body["instructions"]);
  }

  echo["tools"] = json::array();
  if (const json* tools = find(body, "tools"); tools && !(tools->is_array() && tools->empty())) {
    chat["tools"] = translate_function_tools(*tools, ordered["tools"], echo["tools"], r.namespaces);
  }
  echo["tool_choice"] = "auto";
  if (const json* choice = find(body, "tool_choice")) {
    ordered_json c = translate_tool_choice(*choice);
    echo["tool_choice"] =
        choice->is_string() ? *choice : json{{"type", "function"}, {"name", (*choice)["name"]}};
    if (chat.contains("tools")) chat["tool_choice"] = std::move(c);
  }
  echo["parallel_tool_calls"] = true;
  if (auto p = get_bool(body, "parallel_tool_calls")) {
    echo["parallel_tool_calls"] = *p;
    if (chat.contains("tools")) chat["parallel_tool_calls"] = *p;
  }

  echo["text"] = {{"format", {{"type", "text"}}}};
  if (const json* t = find(body, "text")) {
    if (!t->is_object()) wrong_type("text", "an object", *t);
    if (const json* format = find(*t, "format")) {
      chat["response_format"] = translate_format(*format, ordered["text"]["format"]);
      echo["text"]["format"] = *format;
    }
  }

  echo["max_output_tokens"] = nullptr;
  if (const json* max = find(body, "max_output_tokens")) {
    if (as_int(*max, "max_output_tokens") < 1) {
      reject("max_output_tokens", "'max_output_tokens' must be >= 1");
    }
    chat["max_completion_tokens"] = *max;
    echo["max_output_tokens"] = *max;
  }
  for (const char* field : {"temperature", "top_p"}) {
    echo[field] = 1.0;
    if (const json* v = find(body, field)) {
      chat[field] = *v;
      echo[field] = *v;
    }
  }

  // pagedserve's scheduling fields (priority, deadlines): checked where chat parses them.
  for (const char* field : {"priority", "max_queue_seconds", "max_request_seconds"}) {
    if (const json* v = find(body, field)) chat[field] = *v;
  }

  echo["reasoning"] = {{"effort", nullptr}, {"summary", nullptr}};
  if (const json* reasoning = find(body, "reasoning")) {
    if (!reasoning->is_object()) wrong_type("reasoning", "an object", *reasoning);
    if (auto effort = get_string(*reasoning, "effort")) {
      // Templates that read it (gpt-oss's) take the effort; others ignore it.
      chat["chat_template_kwargs"] = {{"reasoning_effort", *effort}};
      echo["reasoning"]["effort"] = *effort;
    }
    if (auto summary = get_string(*reasoning, "summary")) {
      if (*summary != "auto" && *summary != "concise" && *summary != "detailed") {
        reject("reasoning.summary",
               "'reasoning.summary' is '" + *summary + "'; it must be auto, concise or detailed");
      }
      r.summary = true;
      echo["reasoning"]["summary"] = *summary;
    }
  }

  echo["metadata"] = json::object();
  if (const json* meta = find(body, "metadata")) {
    if (!meta->is_object()) wrong_type("metadata", "an object of strings", *meta);
    for (const auto& [k, v] : meta->items()) {
      if (!v.is_string()) wrong_type("metadata." + k, "a string", v);
    }
    echo["metadata"] = *meta;
  }
  // user is a string when present; OpenAI's schema has no null for it, so it is left out.
  if (auto user = get_string(body, "user")) {
    chat["user"] = *user;
    echo["user"] = *user;
  }
  if (auto id = get_string(body, "previous_response_id")) r.previous_response_id = *id;
  echo["previous_response_id"] = r.previous_response_id ? json(*r.previous_response_id) : json();
  r.store = get_bool(body, "store").value_or(false);
  echo["store"] = r.store;
  echo["truncation"] = "disabled";
  r.stream = get_bool(body, "stream").value_or(false);
  chat["stream"] = r.stream;
  return r;
}

}  // namespace

std::variant<ResponsesRequest, ApiError> parse_responses_request(std::string_view body) {
  return guarded<ResponsesRequest>([&] { return translate(body); });
}

ordered_json chat_body(const ResponsesRequest& request, const ordered_json& history) {
  ordered_json chat = request.chat;
  ordered_json messages = ordered_json::array();
  if (!request.instructions.is_null()) messages.push_back(request.instructions);
  for (const auto& m : history) messages.push_back(m);
  for (const auto& m : request.input_messages) messages.push_back(m);
  chat["messages"] = std::move(messages);
  return chat;
}

}  // namespace ps::responses
