#pragma once
// Turns a model's reply into OpenAI tool calls, as vLLM's tool parsers do (--tool-call-parser).
// Formats:
//   hermes:      <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>, repeated;
//                text before the first call (and any after) is content.
//   llama3_json: a reply that starts (after white space) with {"name": ..., "parameters": ...}
//                or <|python_tag|>; several calls are separated by ';'. A reply that starts
//                otherwise is all content.
//   mistral:     [TOOL_CALLS][{"name": "f", "arguments": {...}}, ...]; text before is content.
//   harmony:     gpt-oss's messages to a recipient (harmony_reader.h): "functions.f" calls f,
//                the body is its arguments; the analysis channel (when no reasoning parser has
//                taken it) and the final one are content.
//   qwen3_coder: Qwen3.5's and Qwen3-Coder's XML calls (xml_tool_reader.h):
//                <tool_call><function=f><parameter=k>v</parameter>...</function></tool_call>.
// In every format the arguments key may be "arguments" or "parameters", and a string-valued
// arguments (JSON already encoded) is decoded, so function.arguments is always JSON text.
//
// Streaming: feed() takes text deltas and returns what can be emitted now: content, and per
// call first its index, id and name, then fragments of its arguments as they arrive. A start
// tag split across deltas is held back until complete or ruled out, so tag text never reaches
// content; so is white space right before a tag (the separator the template writes). A call
// that breaks before its name is known goes back to content unchanged; split_tool_calls() on
// the whole text gives exactly what the streamed parts add up to.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/harmony_reader.h"
#include "chat/xml_tool_reader.h"

namespace ps::chat {

enum class ToolCallFormat { kHermes, kLlama3Json, kMistral, kHarmony, kQwen3Xml };

// "hermes" | "llama3_json" | "mistral" | "harmony" (also vLLM's name for it, "openai") |
// "qwen3_coder" (vLLM's name; also "qwen3_xml"); nullopt otherwise.
std::optional<ToolCallFormat> parse_tool_call_format(std::string_view name);
const char* tool_call_format_name(ToolCallFormat format);
// The format a chat template's tool calls take, when its source makes it clear: qwen3_coder for
// <function=, hermes for <tool_call>, mistral for [TOOL_CALLS], llama3_json for <|python_tag|>,
// harmony for <|channel|>; nullopt otherwise.
std::optional<ToolCallFormat> detect_tool_call_format(const std::string& template_source);
// The text that opens a call in `format` (what a lazy grammar waits for; harmony calls are not
// constrained by a grammar, constraint_builder.cpp).
std::string_view tool_call_start_tag(ToolCallFormat format);

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text
};

struct ToolCallDelta {
  int32_t index = 0;
  std::string id;    // non-empty on a call's first delta only
  std::string name;  // likewise
  std::string arguments;
};

struct ToolStreamDelta {
  std::string content;
  std::vector<ToolCallDelta> calls;
};

using ToolCallIdSource = std::function<std::string()>;
// "call_" and 24 random letters and digits, as OpenAI's ids look.
std::string random_tool_call_id();

class ToolCallParser {
 public:
  explicit ToolCallParser(ToolCallFormat format, ToolCallIdSource new_id = random_tool_call_id);

  ToolStreamDelta feed(std::string_view text);
  ToolStreamDelta finish();
  // The calls so far, arguments complete up to what has been fed.
  const std::vector<ToolCall>& calls() const { return calls_; }

 private:
  enum class State {
    kContent,      // outside calls: looking for the start tag
    kOpen,         // after the start (and mistral's '['): white space, then '{'
    kKeyOrEnd,     // inside the object: a key string or '}'
    kKey,          // inside a key string
    kColon,        // after a key
    kValueStart,   // white space, then a value
    kValue,        // inside a value
    kCommaOrEnd,   // after a value: ',' or '}'
    kAfterObject,  // after '}': the format's separator or end tag
    kBetween,      // hermes after </tool_call>; mistral after ']': white space or content
  };
  void step(char c, ToolStreamDelta& out);
  void content_char(char c, ToolStreamDelta& out);
  void after_object_char(char c, ToolStreamDelta& out);
  void value_char(char c, ToolStreamDelta& out);
  void begin_call();
  void open_object();
  void end_value(ToolStreamDelta& out);
  void end_object(ToolStreamDelta& out);
  void fail_call(ToolStreamDelta& out);
  void emit_name(ToolStreamDelta& out);
  void emit_arguments(ToolStreamDelta& out, std::string_view fragment);
  bool arguments_key() const;
  ToolStreamDelta from_harmony(const std::vector<HarmonyPiece>& pieces);  // tool_call_harmony.cpp
  ToolStreamDelta from_xml(const std::vector<XmlToolPiece>& pieces);      // likewise

  ToolCallFormat format_;
  ToolCallIdSource new_id_;
  State state_ = State::kContent;
  bool seen_content_ = false;  // llama3_json: calls only at the reply's start
  std::string pending_;        // content held back: white space and a possible partial tag
  std::string call_raw_;       // everything since the call's start tag, to give back
  std::string key_;            // the key being read (raw JSON, quotes included)
  std::string value_;          // the value being read (raw JSON)
  enum class ValueKind { kString, kContainer, kScalar } value_kind_ = ValueKind::kScalar;
  int depth_ = 0;  // brackets open inside the value
  bool in_string_ = false, escape_ = false;
  std::optional<std::string> name_;
  std::string held_arguments_;  // arguments read before the name, or string-valued ones
  bool have_arguments_ = false;
  bool name_emitted_ = false;
  bool args_streamed_ = false;  // this call's arguments go out as raw fragments
  bool list_open_ = false;      // mistral: inside [TOOL_CALLS][ ... ]
  std::vector<ToolCall> calls_;
  std::optional<HarmonyReader> harmony_;  // the harmony format reads with it
  std::optional<XmlToolReader> xml_;      // and qwen3_coder with this
};

struct ToolCallSplit {
  std::optional<std::string> content;  // nullopt when empty, as vLLM reports it
  std::vector<ToolCall> calls;
};
ToolCallSplit split_tool_calls(ToolCallFormat format, std::string_view text,
                               ToolCallIdSource new_id = random_tool_call_id);

}  // namespace ps::chat
