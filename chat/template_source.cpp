#include "chat/template_source.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace ps::chat {

namespace {

std::optional<std::string> read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw TemplateLoadError(path.string() + ": read failed");
  return s.str();
}

// "<s>" or {"__type": "AddedToken", "content": "<s>", ...}; null or absent is "".
std::string token_text(const nlohmann::json& config, const char* key, const std::string& origin) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
    return (*it)["content"].get<std::string>();
  throw TemplateLoadError(origin + ": " + key + " must be a string or an object with \"content\"");
}

}  // namespace

CheckpointTemplates read_checkpoint_templates(const std::filesystem::path& dir) {
  CheckpointTemplates out;
  const auto config_path = dir / "tokenizer_config.json";
  if (auto text = read_text(config_path)) {
    const std::string origin = config_path.string();
    nlohmann::json config;
    try {
      config = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::parse_error& e) {
      throw TemplateLoadError(origin + ": not valid JSON: " + e.what());
    }
    if (!config.is_object()) throw TemplateLoadError(origin + ": not a JSON object");
    out.bos_token = token_text(config, "bos_token", origin);
    out.eos_token = token_text(config, "eos_token", origin);
    auto it = config.find("chat_template");
    if (it != config.end() && !it->is_null()) {
      out.origin = origin + " (chat_template)";
      if (it->is_string()) {
        out.templates["default"] = it->get<std::string>();
      } else if (it->is_array()) {
        for (const auto& entry : *it) {
          if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
              !entry["name"].is_string() || !entry["template"].is_string())
            throw TemplateLoadError(origin +
                                    ": chat_template list entries must be {\"name\": string, "
                                    "\"template\": string}");
          out.templates[entry["name"].get<std::string>()] = entry["template"].get<std::string>();
        }
      } else {
        throw TemplateLoadError(origin +
                                ": chat_template must be a string or a list of {name, template}");
      }
    }
  }
  const auto jinja_path = dir / "chat_template.jinja";
  if (auto text = read_text(jinja_path)) {
    out.templates["default"] = *text;
    out.origin = jinja_path.string();
  }
  return out;
}

std::optional<std::string> choose_template(const CheckpointTemplates& t,
                                           const std::string& requested, bool has_tools) {
  if (t.templates.empty()) return std::nullopt;
  if (!requested.empty()) {
    auto it = t.templates.find(requested);
    if (it != t.templates.end()) return it->second;
    std::string names;
    for (const auto& [name, text] : t.templates) names += (names.empty() ? "" : ", ") + name;
    throw TemplateLoadError(t.origin + ": no chat template named '" + requested +
                            "' (it has: " + names + ")");
  }
  if (has_tools && t.templates.count("tool_use")) return t.templates.at("tool_use");
  if (t.templates.count("default")) return t.templates.at("default");
  if (t.templates.size() == 1) return t.templates.begin()->second;
  std::string names;
  for (const auto& [name, text] : t.templates) names += (names.empty() ? "" : ", ") + name;
  throw TemplateLoadError(t.origin + ": several chat templates (" + names +
                          ") and none is named 'default'; choose one by name");
}

std::string read_template_file(const std::filesystem::path& path) {
  auto text = read_text(path);
  if (!text) throw TemplateLoadError(path.string() + ": cannot read the chat template file");
  return *text;
}

jinja::Template parse_template(const std::string& source, const std::string& origin) {
  try {
    return jinja::Template::parse(source);
  } catch (const jinja::TemplateError& e) {
    throw TemplateLoadError(origin + ": " + e.what());
  }
}

}  // namespace ps::chat
