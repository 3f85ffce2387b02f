#include "openai/structured_request.h"

#include <set>

#include "openai/json_fields.h"

namespace ps {
namespace {

using nlohmann::json;
using namespace json_fields;  // NOLINT: this file is made of these helpers

bool valid_function_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

ToolFunction parse_tool(const json& tool, size_t i) {
  const std::string where = "tools[" + std::to_string(i) + "]";
  if (!tool.is_object()) wrong_type(where, "an object", tool);
  if (tool.value("type", std::string()) != "function") {
    reject(where + ".type", "'" + where + ".type' must be \"function\"");
  }
  const json* fn = find(tool, "function");
  if (!fn) reject(where + ".function", "'" + where + ".function' is required");
  if (!fn->is_object()) wrong_type(where + ".function", "an object", *fn);
  ToolFunction out;
  auto name = get_string(*fn, "name");
  if (!name) reject(where + ".function.name", "'" + where + ".function.name' is required");
  if (!valid_function_name(*name)) {
    reject(where + ".function.name", "'" + where +
                                         ".function.name' must be 1 to 64 letters, digits, "
                                         "underscores or dashes, got '" +
                                         *name + "'");
  }
  out.name = *name;
  if (const json* params = find(*fn, "parameters")) {
    if (!params->is_object())
      wrong_type(where + ".function.parameters", "a JSON schema object", *params);
    out.parameters = nlohmann::ordered_json::parse(params->dump());
  } else {
    out.parameters = {{"type", "object"}};
  }
  return out;
}

}  // namespace

ToolRequest parse_tool_request(const json& body, std::string_view raw) {
  for (const char* legacy : {"functions", "function_call"}) {
    if (find(body, legacy)) {
      reject(legacy, std::string("'") + legacy +
                         "' is deprecated and not supported; send 'tools' and 'tool_choice'");
    }
  }
  ToolRequest r;
  std::set<std::string> names;
  if (const json* tools = find(body, "tools")) {
    if (!tools->is_array()) wrong_type("tools", "an array of tools", *tools);
    if (tools->size() > 128) {
      reject("tools", "at most 128 tools per request, got " + std::to_string(tools->size()));
    }
    for (size_t i = 0; i < tools->size(); ++i) {
      ToolFunction f = parse_tool((*tools)[i], i);
      if (!names.insert(f.name).second) {
        reject("tools", "two tools are named '" + f.name + "'");
      }
      r.functions.push_back(std::move(f));
    }
    const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(raw)["tools"];
    for (size_t i = 0; i < r.functions.size(); ++i) {
      const auto& fn = ordered[i]["function"];
      if (auto it = fn.find("parameters"); it != fn.end()) r.functions[i].parameters = *it;
    }
  }
  r.choice = r.functions.empty() ? ToolChoice::kNone : ToolChoice::kAuto;
  if (const json* choice = find(body, "tool_choice")) {
    if (choice->is_string()) {
      const std::string c = choice->get<std::string>();
      if (c == "none") {
        r.choice = ToolChoice::kNone;
      } else if (c == "auto" || c == "required") {
        if (r.functions.empty()) {
          reject("tool_choice", "'tool_choice' \"" + c + "\" needs 'tools'");
        }
        r.choice = c == "auto" ? ToolChoice::kAuto : ToolChoice::kRequired;
      } else {
        reject("tool_choice",
               "'tool_choice' must be \"none\", \"auto\", \"required\" or "
               "{\"type\": \"function\", \"function\": {\"name\": ...}}, got \"" +
                   c + "\"");
      }
    } else if (choice->is_object()) {
      const json* fn = find(*choice, "function");
      auto name = fn && fn->is_object() ? get_string(*fn, "name") : std::nullopt;
      if (choice->value("type", std::string()) != "function" || !name) {
        reject("tool_choice",
               "a named 'tool_choice' is {\"type\": \"function\", \"function\": {\"name\": ...}}");
      }
      if (!names.count(*name)) {
        reject("tool_choice", "'tool_choice' names the function '" + *name +
                                  "', which is not among the request's tools");
      }
      r.choice = ToolChoice::kNamed;
      r.named = *name;
    } else {
      wrong_type("tool_choice", "a string or an object", *choice);
    }
  }
  if (auto v = get_bool(body, "parallel_tool_calls")) r.parallel = *v;
  return r;
}

OutputConstraint parse_output_constraint(const json& body, std::string_view raw) {
  std::vector<OutputConstraint> found;
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(raw);
  // `schema` is body's value at `path`; its text is taken from the ordered parse.
  auto schema_text = [&](const json& schema, const std::string& param,
                         std::initializer_list<const char*> path) {
    if (schema.is_string()) {
      // vLLM accepts the schema as JSON text too (its order is the text's own).
      json parsed = json::parse(schema.get<std::string>(), nullptr, false);
      if (!parsed.is_object()) reject(param, "'" + param + "' must be a JSON schema object");
      return schema.get<std::string>();
    }
    if (!schema.is_object()) wrong_type(param, "a JSON schema object", schema);
    const nlohmann::ordered_json* at = &ordered;
    for (const char* key : path) at = &(*at)[key];
    return at->dump();
  };
  auto regex_of = [](const json& v, const std::string& param) {
    if (!v.is_string()) wrong_type(param, "a regular expression string", v);
    return v.get<std::string>();
  };
  auto choices_of = [](const json& v, const std::string& param) {
    if (!v.is_array() || v.empty()) wrong_type(param, "a non-empty array of strings", v);
    std::vector<std::string> out;
    for (const json& c : v) {
      if (!c.is_string()) wrong_type(param, "a non-empty array of strings", c);
      out.push_back(c.get<std::string>());
    }
    return out;
  };
  using K = OutputConstraint::Kind;
  if (const json* rf = find(body, "response_format")) {
    if (!rf->is_object()) wrong_type("response_format", "an object", *rf);
    const std::string type = rf->value("type", std::string());
    if (type == "json_object") {
      found.push_back({K::kJsonObject, "", {}, "response_format"});
    } else if (type == "json_schema") {
      const json* js = find(*rf, "json_schema");
      if (!js || !js->is_object()) {
        reject("response_format.json_schema",
               "response_format {\"type\": \"json_schema\"} needs 'json_schema': {\"name\", "
               "\"schema\"}");
      }
      auto name = get_string(*js, "name");
      if (!name || !valid_function_name(*name)) {
        reject("response_format.json_schema.name",
               "'response_format.json_schema.name' must be 1 to 64 letters, digits, underscores "
               "or dashes");
      }
      const json* schema = find(*js, "schema");
      if (!schema) {
        reject("response_format.json_schema.schema",
               "'response_format.json_schema.schema' is required");
      }
      found.push_back({K::kJsonSchema,
                       schema_text(*schema, "response_format.json_schema.schema",
                                   {"response_format", "json_schema", "schema"}),
                       {},
                       "response_format.json_schema.schema"});
    } else if (type != "text") {
      reject("response_format.type",
             "'response_format.type' must be \"text\", \"json_object\" or \"json_schema\", got \"" +
                 type + "\"");
    }
  }
  if (const json* so = find(body, "structured_outputs")) {
    if (!so->is_object()) wrong_type("structured_outputs", "an object", *so);
    for (auto it = so->begin(); it != so->end(); ++it) {
      const std::string param = "structured_outputs." + it.key();
      if (it.value().is_null()) continue;
      if (it.key() == "json") {
        found.push_back({K::kJsonSchema,
                         schema_text(it.value(), param, {"structured_outputs", "json"}),
                         {},
                         param});
      } else if (it.key() == "regex") {
        found.push_back({K::kRegex, regex_of(it.value(), param), {}, param});
      } else if (it.key() == "choice") {
        found.push_back({K::kChoice, "", choices_of(it.value(), param), param});
      } else if (it.key() == "grammar") {
        found.push_back({K::kGrammar, regex_of(it.value(), param), {}, param});
      } else if (it.key() == "json_object") {
        if (!it.value().is_boolean()) wrong_type(param, "a boolean", it.value());
        if (it.value().get<bool>()) found.push_back({K::kJsonObject, "", {}, param});
      } else {
        reject(param, "'" + param +
                          "' is not supported (structured_outputs takes json, regex, choice, "
                          "grammar or json_object)");
      }
    }
  }
  if (const json* v = find(body, "guided_json")) {
    found.push_back(
        {K::kJsonSchema, schema_text(*v, "guided_json", {"guided_json"}), {}, "guided_json"});
  }
  if (const json* v = find(body, "guided_regex")) {
    found.push_back({K::kRegex, regex_of(*v, "guided_regex"), {}, "guided_regex"});
  }
  if (const json* v = find(body, "guided_choice")) {
    found.push_back({K::kChoice, "", choices_of(*v, "guided_choice"), "guided_choice"});
  }
  if (const json* v = find(body, "guided_grammar")) {
    found.push_back({K::kGrammar, regex_of(*v, "guided_grammar"), {}, "guided_grammar"});
  }
  if (found.size() > 1) {
    reject(found[1].param, "only one output constraint per request: '" + found[0].param +
                               "' and '" + found[1].param + "' were both sent");
  }
  return found.empty() ? OutputConstraint{} : found[0];
}

}  // namespace ps
