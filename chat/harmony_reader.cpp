#include "chat/harmony_reader.h"

#include <algorithm>
#include <array>

namespace ps::chat {
namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kConstrain = "<|constrain|>";
constexpr std::array<std::string_view, 3> kEnds = {"<|end|>", "<|call|>", "<|return|>"};
constexpr std::string_view kTo = "to=";
// A header holds a role, a channel, a recipient and a content type: far below this. Text that
// runs past it without <|message|> was not a header.
constexpr size_t kMaxHeader = 512;

// The length of the longest end of `s` that could begin one of the markers ("<|...|>").
size_t partial_marker_suffix(std::string_view s) {
  const size_t lt = s.rfind('<');
  if (lt == std::string_view::npos || s.size() - lt > 16) return 0;
  const std::string_view tail = s.substr(lt);
  for (std::string_view m :
       {kStart, kChannel, kMessage, kConstrain, kEnds[0], kEnds[1], kEnds[2]}) {
    if (tail.size() < m.size() && m.substr(0, tail.size()) == tail) return tail.size();
  }
  return 0;
}

// Whether `s` (non-empty) begins as a header without a role does: with " to=" or a header
// marker, or with a part of one.
bool could_begin_header(std::string_view s) {
  for (std::string_view m : {std::string_view(" to="), kChannel, kConstrain}) {
    const size_t n = std::min(s.size(), m.size());
    if (s.substr(0, n) == m.substr(0, n)) return true;
  }
  return false;
}

// The word after `key` in a header (up to white space or a marker), or empty.
std::string word_after(std::string_view header, std::string_view key) {
  const size_t at = header.find(key);
  if (at == std::string_view::npos) return {};
  const size_t from = at + key.size();
  size_t to = from;
  while (to < header.size() && header[to] != ' ' && header[to] != '<' && header[to] != '\n') ++to;
  return std::string(header.substr(from, to - from));
}

}  // namespace

std::vector<HarmonyPiece> HarmonyReader::feed(std::string_view text) {
  std::vector<HarmonyPiece> out;
  pending_.append(text);
  run(out, false);
  return out;
}

std::vector<HarmonyPiece> HarmonyReader::finish() {
  std::vector<HarmonyPiece> out;
  run(out, true);
  if (state_ == State::kBody) end_message(out);
  pending_.clear();
  return out;
}

void HarmonyReader::run(std::vector<HarmonyPiece>& out, bool at_end) {
  while (!pending_.empty()) {
    bool progressed = false;
    switch (state_) {
      case State::kHeader:
        progressed = read_header(out, at_end);
        break;
      case State::kBody:
        progressed = read_body(out, at_end);
        break;
      case State::kBetween:
        progressed = read_between(at_end);
        break;
    }
    if (!progressed) return;
  }
}

bool HarmonyReader::read_header(std::vector<HarmonyPiece>& out, bool at_end) {
  // A header starts with a marker or " to=" (or, after <|start|>, a role). Anything else is text
  // the model wrote outside the format: content.
  if (!role_first_ && !could_begin_header(pending_)) {
    plain_ = true;
    state_ = State::kBody;
    return true;
  }
  const size_t message = pending_.find(kMessage);
  if (message == std::string::npos) {
    if (pending_.size() > kMaxHeader) {  // not a header after all
      plain_ = true;
      role_first_ = false;
      state_ = State::kBody;
      return true;
    }
    if (at_end && !role_first_ && pending_.find("<|") == std::string::npos) {  // just text
      plain_ = true;
      role_first_ = false;
      state_ = State::kBody;
      return true;
    }
    if (at_end) pending_.clear();  // a header cut off by the end: markup, dropped
    return false;
  }
  begin_message(std::string_view(pending_).substr(0, message), out);
  pending_.erase(0, message + kMessage.size());
  return true;
}

void HarmonyReader::begin_message(std::string_view header, std::vector<HarmonyPiece>& out) {
  channel_ = word_after(header, kChannel);
  recipient_ = word_after(header, kTo);
  plain_ = false;
  role_first_ = false;
  state_ = State::kBody;
  if (!recipient_.empty()) {
    out.push_back({HarmonyPiece::Kind::kCallStart, recipient_});
  } else if (channel_ == "analysis") {
    reached_reasoning_ = true;
  }
}

void HarmonyReader::emit_body(std::string_view text, std::vector<HarmonyPiece>& out) {
  if (text.empty()) return;
  HarmonyPiece::Kind kind = HarmonyPiece::Kind::kContent;
  if (!plain_ && !recipient_.empty()) {
    kind = HarmonyPiece::Kind::kCallArguments;
  } else if (!plain_ && channel_ == "analysis") {
    kind = HarmonyPiece::Kind::kReasoning;
  }
  if (!out.empty() && out.back().kind == kind && kind != HarmonyPiece::Kind::kCallStart) {
    out.back().text.append(text);
  } else {
    out.push_back({kind, std::string(text)});
  }
}

void HarmonyReader::end_message(std::vector<HarmonyPiece>& out) {
  if (!plain_ && !recipient_.empty()) out.push_back({HarmonyPiece::Kind::kCallEnd, {}});
  channel_.clear();
  recipient_.clear();
  plain_ = false;
  state_ = State::kBetween;
}

bool HarmonyReader::read_body(std::vector<HarmonyPiece>& out, bool at_end) {
  // The body runs to the first end marker, or to a marker that begins the next message (a
  // model may leave out <|end|>); plain text also ends where a header begins.
  size_t stop = std::string::npos, skip = 0;
  for (std::string_view m : kEnds) {
    const size_t at = pending_.find(m);
    if (at < stop) stop = at, skip = m.size();
  }
  for (std::string_view m : {kStart, kChannel}) {
    const size_t at = pending_.find(m);
    if (at < stop) stop = at, skip = 0;
  }
  if (stop == std::string::npos) {
    const size_t hold = at_end ? 0 : partial_marker_suffix(pending_);
    emit_body(std::string_view(pending_).substr(0, pending_.size() - hold), out);
    pending_.erase(0, pending_.size() - hold);
    return false;
  }
  emit_body(std::string_view(pending_).substr(0, stop), out);
  pending_.erase(0, stop + skip);
  end_message(out);
  return true;
}

bool HarmonyReader::read_between(bool at_end) {
  // White space between messages is no one's text.
  const size_t text = pending_.find_first_not_of(" \t\r\n");
  if (text == std::string::npos) {
    if (at_end) pending_.clear();
    return false;
  }
  const std::string_view rest = std::string_view(pending_).substr(text);
  if (rest.substr(0, kStart.size()) == kStart) {
    pending_.erase(0, text + kStart.size());
    role_first_ = true;
    state_ = State::kHeader;
    return true;
  }
  if (rest.substr(0, kChannel.size()) == kChannel) {
    pending_.erase(0, text);
    state_ = State::kHeader;
    return true;
  }
  if (!at_end && rest.size() < kStart.size() &&
      (kStart.substr(0, rest.size()) == rest || kChannel.substr(0, rest.size()) == rest)) {
    return false;  // maybe a marker: wait
  }
  pending_.erase(0, text);
  plain_ = true;
  state_ = State::kBody;
  return true;
}

}  // namespace ps::chat
