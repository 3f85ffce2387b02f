// The streaming tool-call parser (ToolCallParser, tool_call_parser.h): a character-at-a-time
// machine over content, start tags and each call's JSON object. The formats by name, their tags
// and call ids are tool_call_formats.cpp's.
#include "chat/tool_call_parser.h"

#include <algorithm>
#include <random>

#include <nlohmann/json.hpp>

#include "chat/json_whitespace.h"
#include "chat/tool_call_tags.h"

namespace ps::chat {

namespace {

// s is white space followed by a proper prefix of `tag` (or by nothing): it may still become
// "separator + tag", so it is held back.
bool may_become(std::string_view s, std::string_view tag) {
  size_t i = 0;
  while (i < s.size() && is_json_whitespace(s[i])) ++i;
  std::string_view rest = s.substr(i);
  return rest.size() < tag.size() && tag.substr(0, rest.size()) == rest;
}

bool all_ws(std::string_view s) {
  return std::all_of(s.begin(), s.end(), is_json_whitespace);
}

bool ends_with_tag(std::string_view s, std::string_view tag) {
  size_t i = 0;
  while (i < s.size() && is_json_whitespace(s[i])) ++i;
  return s.substr(i) == tag;
}

}  // namespace

ToolCallParser::ToolCallParser(ToolCallFormat format, ToolCallIdSource new_id)
    : format_(format), new_id_(std::move(new_id)) {
  if (format == ToolCallFormat::kHarmony) harmony_.emplace();
  if (format == ToolCallFormat::kQwen3Xml) xml_.emplace();
}

ToolStreamDelta ToolCallParser::feed(std::string_view text) {
  if (harmony_) return from_harmony(harmony_->feed(text));
  if (xml_) return from_xml(xml_->feed(text));
  ToolStreamDelta out;
  for (char c : text) step(c, out);
  return out;
}

ToolStreamDelta ToolCallParser::finish() {
  if (harmony_) return from_harmony(harmony_->finish());
  if (xml_) return from_xml(xml_->finish());
  ToolStreamDelta out;
  switch (state_) {
    case State::kContent:
    case State::kBetween:
      // White space after the last call is the template's separator, not an answer.
      if (calls_.empty() || !all_ws(pending_)) out.content += pending_;
      break;
    case State::kAfterObject:
      break;  // a call complete but for its end tag (cut by max_tokens): keep it
    default:
      // Cut inside a call: a named call keeps what it has; one with no name yet was never a call.
      if (!name_emitted_) out.content += call_raw_;
      break;
  }
  pending_.clear();
  call_raw_.clear();
  state_ = State::kContent;
  return out;
}

void ToolCallParser::step(char c, ToolStreamDelta& out) {
  if (state_ != State::kContent && state_ != State::kBetween) call_raw_ += c;
  switch (state_) {
    case State::kContent:
    case State::kBetween:
      return content_char(c, out);
    case State::kOpen:
      if (is_json_whitespace(c)) return;
      if (format_ == ToolCallFormat::kMistral && !list_open_) {
        if (c != '[') return fail_call(out);
        list_open_ = true;
        return;
      }
      if (c != '{') return fail_call(out);
      return open_object();
    case State::kKeyOrEnd:
      if (is_json_whitespace(c)) return;
      if (c == '}') return end_object(out);
      if (c != '"') return fail_call(out);
      key_ = "\"";
      escape_ = false;
      state_ = State::kKey;
      return;
    case State::kKey:
      key_ += c;
      if (escape_) {
        escape_ = false;
      } else if (c == '\\') {
        escape_ = true;
      } else if (c == '"') {
        state_ = State::kColon;
      }
      return;
    case State::kColon:
      if (is_json_whitespace(c)) return;
      if (c != ':') return fail_call(out);
      state_ = State::kValueStart;
      return;
    case State::kValueStart:
      if (is_json_whitespace(c)) return;
      if (c == ',' || c == '}' || c == ']' || c == ':') return fail_call(out);
      value_.clear();
      depth_ = 0;
      in_string_ = escape_ = false;
      value_kind_ = c == '"'               ? ValueKind::kString
                    : c == '{' || c == '[' ? ValueKind::kContainer
                                           : ValueKind::kScalar;
      args_streamed_ = value_kind_ == ValueKind::kContainer && arguments_key() && name_emitted_;
      state_ = State::kValue;
      return value_char(c, out);
    case State::kValue:
      return value_char(c, out);
    case State::kCommaOrEnd:
      if (is_json_whitespace(c)) return;
      if (c == ',') {
        state_ = State::kKeyOrEnd;
        return;
      }
      if (c == '}') return end_object(out);
      return fail_call(out);
    case State::kAfterObject:
      return after_object_char(c, out);
  }
}

void ToolCallParser::content_char(char c, ToolStreamDelta& out) {
  if (format_ == ToolCallFormat::kLlama3Json) {
    // Calls only where the reply starts; after the first content, everything is content.
    if (seen_content_) {
      out.content += c;
      return;
    }
    pending_ += c;
    if (c == '{' && all_ws(std::string_view(pending_).substr(0, pending_.size() - 1))) {
      call_raw_ = pending_;
      pending_.clear();
      begin_call();
      return open_object();
    }
    if (ends_with_tag(pending_, kPythonTag)) {
      call_raw_ = pending_;
      pending_.clear();
      return begin_call();
    }
    if (may_become(pending_, kPythonTag)) return;
    seen_content_ = true;
    out.content += pending_;
    pending_.clear();
    return;
  }
  const std::string_view tag = tool_call_start_tag(format_);
  pending_ += c;
  if (ends_with_tag(pending_, tag)) {
    call_raw_ = pending_;  // the separator and the tag, should the call turn out not to be one
    pending_.clear();
    list_open_ = false;
    return begin_call();
  }
  // Emit from the front until what is left could still be "white space + tag".
  size_t cut = 0;
  while (cut < pending_.size() && !may_become(std::string_view(pending_).substr(cut), tag)) ++cut;
  out.content += pending_.substr(0, cut);
  pending_.erase(0, cut);
}

void ToolCallParser::begin_call() {
  state_ = State::kOpen;
  name_.reset();
  held_arguments_.clear();
  have_arguments_ = name_emitted_ = args_streamed_ = false;
}

void ToolCallParser::open_object() {
  state_ = State::kKeyOrEnd;
}

bool ToolCallParser::arguments_key() const {
  return key_ == "\"arguments\"" || key_ == "\"parameters\"";
}

void ToolCallParser::value_char(char c, ToolStreamDelta& out) {
  if (value_kind_ == ValueKind::kScalar && depth_ == 0 &&
      (is_json_whitespace(c) || c == ',' || c == '}' || c == ']')) {
    // The character after a number/true/false/null ends it and belongs to what follows.
    call_raw_.pop_back();
    end_value(out);
    return step(c, out);
  }
  value_ += c;
  if (args_streamed_) emit_arguments(out, std::string_view(&c, 1));
  bool done = false;
  if (in_string_) {
    if (escape_) {
      escape_ = false;
    } else if (c == '\\') {
      escape_ = true;
    } else if (c == '"') {
      in_string_ = false;
      done = depth_ == 0;
    }
  } else if (c == '"') {
    in_string_ = true;
  } else if (c == '{' || c == '[') {
    ++depth_;
  } else if (c == '}' || c == ']') {
    --depth_;
    done = depth_ == 0;
    if (depth_ < 0) return fail_call(out);
  }
  if (done) end_value(out);
}

void ToolCallParser::end_value(ToolStreamDelta& out) {
  state_ = State::kCommaOrEnd;
  std::string key;
  try {
    key = nlohmann::json::parse(key_).get<std::string>();
  } catch (const std::exception&) {
    return fail_call(out);
  }
  if (key == "name") {
    if (name_) return;  // a repeated key: the first one names the call
    nlohmann::json v = nlohmann::json::parse(value_, nullptr, /*allow_exceptions=*/false);
    if (!v.is_string()) return fail_call(out);
    name_ = v.get<std::string>();
    return emit_name(out);
  }
  if (!arguments_key() || have_arguments_) return;
  have_arguments_ = true;
  if (args_streamed_) return;
  if (value_kind_ == ValueKind::kString) {
    // Arguments the model already encoded as a JSON string: the string's text is the JSON.
    nlohmann::json v = nlohmann::json::parse(value_, nullptr, false);
    held_arguments_ = v.is_string() ? v.get<std::string>() : value_;
  } else {
    held_arguments_ = value_;
  }
  if (name_emitted_) {
    emit_arguments(out, held_arguments_);
    held_arguments_.clear();
  }
}

void ToolCallParser::end_object(ToolStreamDelta& out) {
  if (!name_) return fail_call(out);
  if (!have_arguments_) emit_arguments(out, "{}");  // OpenAI always carries arguments
  call_raw_.clear();
  pending_.clear();
  state_ = State::kAfterObject;
}

void ToolCallParser::after_object_char(char c, ToolStreamDelta& out) {
  switch (format_) {
    case ToolCallFormat::kHermes:
      pending_ += c;
      if (ends_with_tag(pending_, kHermesClose)) {
        pending_.clear();
        call_raw_.clear();
        state_ = State::kBetween;
        return;
      }
      if (may_become(pending_, kHermesClose)) return;
      {
        // No end tag after the call: what follows is text again.
        std::string rest = std::move(pending_);
        pending_.clear();
        call_raw_.clear();
        state_ = State::kBetween;
        for (char r : rest) content_char(r, out);
      }
      return;
    case ToolCallFormat::kLlama3Json:
      if (is_json_whitespace(c)) return;
      if (c == ';') {
        call_raw_ = ";";
        return begin_call();
      }
      call_raw_.clear();
      state_ = State::kContent;
      seen_content_ = true;
      out.content += c;
      return;
    case ToolCallFormat::kMistral:
      if (is_json_whitespace(c)) return;
      if (c == ',') {
        call_raw_ = ",";
        return begin_call();
      }
      call_raw_.clear();
      state_ = State::kBetween;
      if (c != ']') content_char(c, out);
      return;
    case ToolCallFormat::kHarmony:
    case ToolCallFormat::kQwen3Xml:
      return;  // read by harmony_ / xml_ (feed), never here
  }
}

void ToolCallParser::fail_call(ToolStreamDelta& out) {
  // Before the name, nothing of the call was emitted: it goes back as the text it was. After
  // it, the call stands as far as it got and the rest is text.
  if (!name_emitted_) {
    out.content += call_raw_;
  } else if (!call_raw_.empty()) {
    out.content += call_raw_.back();
  }
  call_raw_.clear();
  pending_.clear();
  seen_content_ = true;
  state_ = State::kContent;
}

void ToolCallParser::emit_name(ToolStreamDelta& out) {
  ToolCall call{new_id_(), *name_, ""};
  ToolCallDelta d;
  d.index = static_cast<int32_t>(calls_.size());
  d.id = call.id;
  d.name = call.name;
  calls_.push_back(std::move(call));
  out.calls.push_back(std::move(d));
  name_emitted_ = true;
  if (!held_arguments_.empty()) {
    emit_arguments(out, held_arguments_);
    held_arguments_.clear();
  }
}

void ToolCallParser::emit_arguments(ToolStreamDelta& out, std::string_view fragment) {
  if (calls_.empty() || fragment.empty()) return;
  const int32_t index = static_cast<int32_t>(calls_.size()) - 1;
  calls_.back().arguments += fragment;
  if (!out.calls.empty() && out.calls.back().index == index) {
    out.calls.back().arguments += fragment;
  } else {
    ToolCallDelta d;
    d.index = index;
    d.arguments = std::string(fragment);
    out.calls.push_back(std::move(d));
  }
}

ToolCallSplit split_tool_calls(ToolCallFormat format, std::string_view text,
                               ToolCallIdSource new_id) {
  ToolCallParser parser(format, std::move(new_id));
  std::string content = parser.feed(text).content;
  content += parser.finish().content;
  ToolCallSplit split;
  if (!content.empty()) split.content = std::move(content);
  split.calls = parser.calls();
  return split;
}

}  // namespace ps::chat
