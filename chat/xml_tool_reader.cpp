#include "chat/xml_tool_reader.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "chat/json_whitespace.h"

namespace ps::chat {
namespace {

constexpr std::string_view kCallOpen = "<tool_call>";
constexpr std::string_view kCallClose = "</tool_call>";
constexpr std::string_view kFunctionOpen = "<function=";
constexpr std::string_view kFunctionClose = "</function>";
constexpr std::string_view kParamOpen = "<parameter=";
constexpr std::string_view kParamClose = "</parameter>";

// Where in `s` text that may still grow into `tag` starts: the first position from which the
// rest is a proper prefix of the tag (s.size() when none).
size_t partial_tag_at(std::string_view s, std::string_view tag) {
  for (size_t i = s.size() > tag.size() ? s.size() - tag.size() : 0; i < s.size(); ++i) {
    if (tag.substr(0, s.size() - i) == s.substr(i)) return i;
  }
  return s.size();
}

std::string trim_layout_newlines(std::string_view v) {
  if (!v.empty() && v.front() == '\n') v.remove_prefix(1);
  if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
  return std::string(v);
}

// A parameter's value as JSON: a JSON literal, object or array as itself, anything else a string.
nlohmann::ordered_json value_of(const std::string& text) {
  const auto parsed = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded() && !parsed.is_string()) return parsed;
  return text;
}

}  // namespace

std::vector<XmlToolPiece> XmlToolReader::feed(std::string_view text) {
  pending_.append(text);
  std::vector<XmlToolPiece> out;
  run(out, false);
  return out;
}

std::vector<XmlToolPiece> XmlToolReader::finish() {
  std::vector<XmlToolPiece> out;
  run(out, true);
  if (state_ == State::kParams) {
    end_call(out);  // cut inside the call: the complete parameters stand
  } else if (state_ != State::kClosing && !pending_.empty()) {
    // Content, or a call cut before its name: the text it was.
    out.push_back({XmlToolPiece::Kind::kContent, pending_});
  }
  pending_.clear();
  state_ = State::kContent;
  return out;
}

void XmlToolReader::end_call(std::vector<XmlToolPiece>& out) {
  nlohmann::ordered_json args = nlohmann::ordered_json::object();
  for (const auto& [key, value] : params_) args[key] = value_of(value);
  out.push_back({XmlToolPiece::Kind::kCallArguments, args.dump()});
  params_.clear();
}

void XmlToolReader::run(std::vector<XmlToolPiece>& out, bool at_end) {
  for (bool more = true; more;) {
    switch (state_) {
      case State::kContent:
        more = content(out, at_end);
        break;
      case State::kOpen:
        more = open(out);
        break;
      case State::kParams:
        more = params(out, at_end);
        break;
      case State::kClosing:
        more = closing(at_end);
        break;
    }
  }
}

bool XmlToolReader::content(std::vector<XmlToolPiece>& out, bool at_end) {
  const size_t open = pending_.find(kCallOpen);
  if (open == std::string::npos) {
    if (at_end) return false;  // finish() emits the rest
    // Emit all but what may still become "white space + <tool_call>".
    size_t keep = partial_tag_at(pending_, kCallOpen);
    while (keep > 0 && is_json_whitespace(pending_[keep - 1])) --keep;
    if (keep > 0) out.push_back({XmlToolPiece::Kind::kContent, pending_.substr(0, keep)});
    pending_.erase(0, keep);
    return false;
  }
  // White space right before the tag is the template's separator.
  size_t end = open;
  while (end > 0 && is_json_whitespace(pending_[end - 1])) --end;
  if (end > 0) out.push_back({XmlToolPiece::Kind::kContent, pending_.substr(0, end)});
  pending_.erase(0, end);  // the separator and the call's text, kept to give back
  params_.clear();
  state_ = State::kOpen;
  return true;
}

bool XmlToolReader::open(std::vector<XmlToolPiece>& out) {
  const size_t tag_end = pending_.find(kCallOpen) + kCallOpen.size();  // after the separator
  size_t i = tag_end;
  while (i < pending_.size() && is_json_whitespace(pending_[i])) ++i;
  const std::string_view rest = std::string_view(pending_).substr(i);
  const size_t n = std::min(rest.size(), kFunctionOpen.size());
  const size_t close = rest.find('>');
  if (rest.substr(0, n) != kFunctionOpen.substr(0, n) || close == kFunctionOpen.size()) {
    // Not a call in this format (or no name): the tag is content, and reading goes on after it.
    out.push_back({XmlToolPiece::Kind::kContent, pending_.substr(0, tag_end)});
    pending_.erase(0, tag_end);
    state_ = State::kContent;
    return true;
  }
  if (close == std::string_view::npos) return false;  // the name is still coming
  out.push_back({XmlToolPiece::Kind::kCallStart,
                 std::string(rest.substr(kFunctionOpen.size(), close - kFunctionOpen.size()))});
  pending_.erase(0, i + close + 1);
  state_ = State::kParams;
  return true;
}

bool XmlToolReader::params(std::vector<XmlToolPiece>& out, bool at_end) {
  size_t i = 0;
  while (i < pending_.size() && is_json_whitespace(pending_[i])) ++i;
  const std::string_view rest = std::string_view(pending_).substr(i);
  if (rest.starts_with(kParamOpen)) {
    const size_t name_end = rest.find('>');
    const size_t value_end = rest.find(kParamClose);
    if (name_end == std::string_view::npos || value_end == std::string_view::npos) return false;
    if (value_end > name_end) {  // else "<parameter=</parameter>": no name, nothing kept
      params_.push_back(
          {std::string(rest.substr(kParamOpen.size(), name_end - kParamOpen.size())),
           trim_layout_newlines(rest.substr(name_end + 1, value_end - name_end - 1))});
    }
    pending_.erase(0, i + value_end + kParamClose.size());
    return true;
  }
  if (rest.starts_with(kFunctionClose)) {
    end_call(out);
    pending_.erase(0, i + kFunctionClose.size());
    state_ = State::kClosing;
    return true;
  }
  if (at_end || rest.empty()) return false;
  const bool may_be_tag = kParamOpen.starts_with(rest.substr(0, kParamOpen.size())) ||
                          kFunctionClose.starts_with(rest.substr(0, kFunctionClose.size()));
  if (may_be_tag) return false;
  // Text between parameters belongs to no value: skip to the next '<'.
  const size_t lt = rest.find('<', 1);
  pending_.erase(0, lt == std::string_view::npos ? pending_.size() : i + lt);
  return lt != std::string_view::npos;
}

bool XmlToolReader::closing(bool at_end) {
  size_t i = 0;
  while (i < pending_.size() && is_json_whitespace(pending_[i])) ++i;
  const std::string_view rest = std::string_view(pending_).substr(i);
  if (rest.starts_with(kCallClose)) {
    pending_.erase(0, i + kCallClose.size());
  } else if (!at_end && kCallClose.starts_with(rest)) {
    return false;  // </tool_call> may still be arriving
  }
  state_ = State::kContent;  // (a model that forgot </tool_call> goes on with content)
  return true;
}

}  // namespace ps::chat
