#include "chat/reasoning_parser.h"
#include "chat/json_whitespace.h"

#include <algorithm>

namespace ps::chat {

namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

bool only_ws(std::string_view s) {
  return std::all_of(s.begin(), s.end(), is_json_whitespace);
}

size_t skip_ws(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_json_whitespace(s[i])) ++i;
  return i;
}

// The length of the longest end of `s` that could be the start of `tag`.
size_t partial_tag_suffix(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

}  // namespace

std::optional<ReasoningStyle> parse_reasoning_style(std::string_view name) {
  if (name == "qwen3") return ReasoningStyle::kQwen3;
  if (name == "deepseek_r1") return ReasoningStyle::kDeepSeekR1;
  if (name == "harmony" || name == "openai_gptoss") return ReasoningStyle::kHarmony;
  return std::nullopt;
}

const char* reasoning_style_name(ReasoningStyle style) {
  switch (style) {
    case ReasoningStyle::kQwen3:
      return "qwen3";
    case ReasoningStyle::kDeepSeekR1:
      return "deepseek_r1";
    case ReasoningStyle::kHarmony:
      break;
  }
  return "harmony";
}

// A harmony reader's pieces as reasoning and answer; a tool call goes into the answer as one
// canonical harmony message, which the harmony tool-call parser reads back.
static ReasoningDelta from_harmony(const std::vector<HarmonyPiece>& pieces) {
  ReasoningDelta out;
  for (const HarmonyPiece& p : pieces) {
    switch (p.kind) {
      case HarmonyPiece::Kind::kReasoning:
        out.reasoning += p.text;
        break;
      case HarmonyPiece::Kind::kContent:
      case HarmonyPiece::Kind::kCallArguments:
        out.content += p.text;
        break;
      case HarmonyPiece::Kind::kCallStart:
        out.content += "<|start|>assistant to=" + p.text + "<|channel|>commentary json<|message|>";
        break;
      case HarmonyPiece::Kind::kCallEnd:
        out.content += "<|call|>";
        break;
    }
  }
  return out;
}

// Where the prompt leaves the reply: inside an open think block, after a closed one, or
// neither (the prompt says nothing).
enum class PromptEnd { kOpenThink, kClosedThink, kUnknown };

static PromptEnd prompt_end(std::string_view prompt) {
  size_t open = prompt.rfind(kOpen), close = prompt.rfind(kClose);
  if (open != std::string_view::npos && (close == std::string_view::npos || close < open) &&
      only_ws(prompt.substr(open + kOpen.size())))
    return PromptEnd::kOpenThink;
  if (close != std::string_view::npos && (open == std::string_view::npos || open < close) &&
      only_ws(prompt.substr(close + kClose.size())))
    return PromptEnd::kClosedThink;
  return PromptEnd::kUnknown;
}

std::optional<ReasoningStyle> detect_reasoning_style(const std::string& template_source,
                                                     const std::string& generation_prompt) {
  if (template_source.find("<|channel|>") != std::string::npos) return ReasoningStyle::kHarmony;
  bool opens = template_source.find(kOpen) != std::string::npos;
  bool closes = template_source.find(kClose) != std::string::npos;
  if (!opens && !closes) return std::nullopt;
  // DeepSeek-R1's own template only strips "...</think>" from history: its model may or may
  // not write the opening tag, which deepseek_r1 handles either way.
  if (!opens || prompt_end(generation_prompt) == PromptEnd::kOpenThink)
    return ReasoningStyle::kDeepSeekR1;
  return ReasoningStyle::kQwen3;
}

ReasoningParser::ReasoningParser(ReasoningStyle style, std::string_view prompt) {
  if (style == ReasoningStyle::kHarmony) {
    harmony_.emplace();
    state_ = State::kContent;
    drop_leading_start_ = false;
    reached_reasoning_ = false;
    return;
  }
  switch (prompt_end(prompt)) {
    case PromptEnd::kOpenThink:
      state_ = State::kReasoning;
      drop_leading_start_ = true;
      break;
    case PromptEnd::kClosedThink:
      state_ = State::kContent;
      drop_leading_start_ = false;
      break;
    case PromptEnd::kUnknown:
      state_ = style == ReasoningStyle::kQwen3 ? State::kBeforeStart : State::kReasoning;
      drop_leading_start_ = style == ReasoningStyle::kDeepSeekR1;
      break;
  }
  reached_reasoning_ = state_ == State::kReasoning;
}

ReasoningDelta ReasoningParser::feed(std::string_view text) {
  if (harmony_) return from_harmony(harmony_->feed(text));
  ReasoningDelta out;
  pending_.append(text);
  run(out, false);
  return out;
}

ReasoningDelta ReasoningParser::finish() {
  if (harmony_) return from_harmony(harmony_->finish());
  ReasoningDelta out;
  run(out, true);
  return out;
}

void ReasoningParser::run(ReasoningDelta& out, bool at_end) {
  while (true) {
    if (state_ == State::kContent) {
      out.content += pending_;
      pending_.clear();
      return;
    }
    if (state_ == State::kBeforeStart || drop_leading_start_) {
      // Waiting to see whether the reply opens with <think> (whitespace before it dropped).
      std::string_view rest = std::string_view(pending_).substr(skip_ws(pending_));
      if (rest.substr(0, kOpen.size()) == kOpen) {
        pending_.erase(0, pending_.size() - rest.size() + kOpen.size());
        state_ = State::kReasoning;
        reached_reasoning_ = true;
        drop_leading_start_ = false;
        continue;
      }
      if (!at_end && kOpen.substr(0, rest.size()) == rest) return;  // maybe a tag; wait
      drop_leading_start_ = false;
      if (state_ == State::kBeforeStart) {
        state_ = State::kContent;
        continue;
      }
    }
    // Inside reasoning: everything up to </think>, holding back a possible partial tag.
    size_t close = pending_.find(kClose);
    if (close != std::string::npos) {
      out.reasoning.append(pending_, 0, close);
      pending_.erase(0, close + kClose.size());
      state_ = State::kContent;
      continue;
    }
    size_t hold = at_end ? 0 : partial_tag_suffix(pending_, kClose);
    out.reasoning.append(pending_, 0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return;
  }
}

ReasoningSplit split_reasoning(ReasoningStyle style, std::string_view prompt,
                               std::string_view text) {
  ReasoningParser parser(style, prompt);
  ReasoningDelta a = parser.feed(text);
  ReasoningDelta b = parser.finish();
  ReasoningSplit split;
  std::string reasoning = a.reasoning + b.reasoning;
  std::string content = a.content + b.content;
  // A reply that never reached reasoning has no reasoning field; one that did has it, even
  // when empty ("<think></think>answer").
  if (parser.reached_reasoning()) split.reasoning = reasoning;
  if (!content.empty()) split.content = content;
  return split;
}

}  // namespace ps::chat
