#pragma once
// Where a checkpoint's chat template comes from, read as transformers reads it:
//   - `chat_template.jinja` beside tokenizer_config.json (transformers gives this file priority
//     over the config's entry when both exist);
//   - else tokenizer_config.json's `chat_template`: a string, or HF's list of
//     {"name", "template"} (choose_template picks one);
//   - or a file the user names (--chat-template FILE).
// bos_token/eos_token come from tokenizer_config.json as a string or an AddedToken object
// ({"content": ...}). A template that fails to parse is an error naming the file and line.
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "chat/jinja_template.h"

namespace ps::chat {

struct TemplateLoadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CheckpointTemplates {
  // By name; a single-string template is named "default".
  std::map<std::string, std::string> templates;
  std::string origin;  // the file they came from, for messages
  std::string bos_token;
  std::string eos_token;
};

// Reads `dir`'s tokenizer_config.json and chat_template.jinja. `templates` is empty when the
// checkpoint ships none. Throws TemplateLoadError for unreadable or malformed files.
CheckpointTemplates read_checkpoint_templates(const std::filesystem::path& dir);

// transformers' choice among named templates: the requested name (an error naming the
// available ones if absent); else "tool_use" when the request has tools and it exists; else
// "default"; else the only one. nullopt when there are none.
std::optional<std::string> choose_template(const CheckpointTemplates& t,
                                           const std::string& requested, bool has_tools);

// Reads a template file (--chat-template FILE).
std::string read_template_file(const std::filesystem::path& path);

// Parses `source`; a syntax error becomes "<origin>: line L, column C: message".
jinja::Template parse_template(const std::string& source, const std::string& origin);

}  // namespace ps::chat
