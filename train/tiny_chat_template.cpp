#include "train/tiny_chat_template.h"

#include <stdexcept>

namespace ps {
namespace {

// Written for pagedserve's tiny model. Every piece of output is a string expression, so the
// trim/lstrip whitespace rules never change what is written; tests/train/tiny_chat_template_test
// checks it against the ChatML builtin for chats without tools.
constexpr const char* kSource = R"JINJA(
{%- if tools %}
{{- '<|im_start|>system\n' }}
{%- if messages and messages[0].role == 'system' %}{{- messages[0].content + '\n' }}{%- endif %}
{{- 'Tools:\n' }}
{%- for tool in tools %}
{%- set f = tool.function if tool.function is defined else tool %}
{%- set params = f.parameters.properties if f.parameters is defined and f.parameters.properties is defined else {} %}
{{- '- ' + f.name + '(' + (params | list | join(', ')) + ')' }}
{%- if f.description %}{{- ': ' + f.description }}{%- endif %}
{{- '\n' }}
{%- endfor %}
{{- 'To call one, reply <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call><|im_end|>\n' }}
{%- endif %}
{%- for m in messages %}
{%- if m.role == 'system' and tools and loop.first %}
{%- elif m.role == 'tool' %}
{%- if loop.first or loop.previtem.role != 'tool' %}{{- '<|im_start|>user\n' }}{%- else %}{{- '\n' }}{%- endif %}
{{- '<tool_response>\n' + (m.content if m.content is string else m.content | tojson) + '\n</tool_response>' }}
{%- if loop.last or loop.nextitem.role != 'tool' %}{{- '<|im_end|>\n' }}{%- endif %}
{%- elif m.role == 'assistant' and m.tool_calls %}
{{- '<|im_start|>assistant\n' }}
{%- if m.content is string and m.content %}{{- m.content + '\n' }}{%- endif %}
{%- for call in m.tool_calls %}
{%- set f = call.function if call.function is defined else call %}
{%- if not loop.first %}{{- '\n' }}{%- endif %}
{{- '<tool_call>\n{"name": ' + (f.name | tojson) + ', "arguments": ' + (f.arguments if f.arguments is string else f.arguments | tojson) + '}\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- else %}
{{- '<|im_start|>' + m.role + '\n' + (m.content if m.content is string else '') + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
)JINJA";

constexpr const char* kReplyEnd = "<|im_end|>\n";

}  // namespace

const std::string& tiny_chat_template_source() {
  // The raw string starts and ends with a newline for readability; the template does not.
  static const std::string source = [] {
    std::string s = kSource;
    return s.substr(1, s.size() - 2);
  }();
  return source;
}

const chat::ChatRenderer& tiny_chat_renderer() {
  static const chat::ChatRenderer renderer =
      chat::ChatRenderer::from_templates({{"default", tiny_chat_template_source()}},
                                         "tiny chat template", {"<|im_start|>", "<|im_end|>"});
  return renderer;
}

RenderedChat render_chat(const chat::ChatRenderer& renderer, const nlohmann::ordered_json& messages,
                         const nlohmann::ordered_json& tools) {
  if (!messages.is_array() || messages.empty()) {
    throw std::runtime_error("an example needs at least one message");
  }
  chat::ChatPromptRequest ask;
  ask.messages = nlohmann::ordered_json(messages.begin(), messages.end() - 1);
  ask.tools = tools;
  ask.add_generation_prompt = true;
  chat::ChatPromptRequest whole;
  whole.messages = messages;
  whole.tools = tools;
  whole.add_generation_prompt = false;
  RenderedChat out;
  std::string full;
  try {
    out.prompt = renderer.render(ask);
    full = renderer.render(whole);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("the chat template failed: ") + e.what());
  }
  const std::string end = kReplyEnd;
  if (full.compare(0, out.prompt.size(), out.prompt) != 0 ||
      full.size() < out.prompt.size() + end.size() ||
      full.compare(full.size() - end.size(), end.size(), end) != 0) {
    throw std::runtime_error(
        "the chat template does not write this conversation as its prompt followed by one "
        "assistant reply ending in <|im_end|>");
  }
  out.reply = full.substr(out.prompt.size(), full.size() - out.prompt.size() - end.size());
  return out;
}

}  // namespace ps
