#include "app/chat_session.h"

#include <charconv>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace ps {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// Whole-string number parsing: "0.7x" is an error, not 0.7.
template <typename T>
std::optional<T> parse_number(const std::string& s) {
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

SamplingParams ChatKnobs::to_params() const {
  SamplingParams p;
  p.temperature = temperature;
  p.top_p = top_p;
  p.top_k = top_k;
  p.max_tokens = max_tokens;
  p.repetition_penalty = repetition_penalty;
  p.seed = seed;
  p.ignore_eos = ignore_eos;
  return p;
}

std::string ChatKnobs::describe() const {
  return "temperature " + fmt(temperature) + ", top_p " + fmt(top_p) + ", top_k " +
         std::to_string(top_k) + ", max_tokens " + std::to_string(max_tokens) +
         ", repetition_penalty " + fmt(repetition_penalty) + ", seed " +
         (seed ? std::to_string(*seed) : std::string("off")) + ", ignore_eos " +
         (ignore_eos ? "on" : "off") + ", model " + (model.empty() ? "(base)" : model);
}

ChatSession::ChatSession(ChatKnobs knobs, std::string system_prompt, int32_t history_turns)
    : knobs_(knobs), system_(std::move(system_prompt)), history_turns_(history_turns) {}

const char* ChatSession::help() {
  return "commands:\n"
         "  /reset                 forget the conversation (keeps the system prompt and knobs)\n"
         "  /system TEXT           set the system prompt (/system alone clears it)\n"
         "  /set NAME VALUE        temperature, top_p, top_k, max_tokens, repetition_penalty,\n"
         "                         seed (a number, or off), history (turns kept, 0 = none),\n"
         "                         ignore_eos (on or off), model (a LoRA adapter's name, or off\n"
         "                         for the base model)\n"
         "  /show                  print the knobs, the system prompt and the history size\n"
         "  /quit                  leave (or Ctrl-D); Ctrl-C stops the current answer\n";
}

std::string ChatSession::set_knob(const std::string& name, const std::string& value) {
  auto bad = [&](const std::string& want) {
    return "/set " + name + ": '" + value + "' is not " + want;
  };
  auto real_in = [&](float lo, float hi, float* out) -> std::string {
    auto v = parse_number<float>(value);
    if (!v || *v < lo || *v > hi) return bad("a number in [" + fmt(lo) + ", " + fmt(hi) + "]");
    *out = *v;
    return name + " = " + fmt(*v);
  };
  auto int_in = [&](int32_t lo, int32_t hi, int32_t* out) -> std::string {
    auto v = parse_number<int32_t>(value);
    if (!v || *v < lo || *v > hi) {
      return bad("a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    *out = *v;
    return name + " = " + std::to_string(*v);
  };
  if (name == "temperature") return real_in(0.0f, 2.0f, &knobs_.temperature);
  if (name == "top_p") return real_in(1e-6f, 1.0f, &knobs_.top_p);
  if (name == "top_k") return int_in(0, 1 << 30, &knobs_.top_k);
  if (name == "max_tokens") return int_in(1, 1 << 30, &knobs_.max_tokens);
  if (name == "repetition_penalty") return real_in(1e-6f, 2.0f, &knobs_.repetition_penalty);
  if (name == "history") return int_in(0, 1 << 20, &history_turns_);
  if (name == "ignore_eos") {
    if (value != "on" && value != "off") return bad("on or off");
    knobs_.ignore_eos = value == "on";
    return "ignore_eos = " + value;
  }
  if (name == "model") {
    knobs_.model = value == "off" ? "" : value;
    return value == "off" ? "model = (base)" : "model = " + value;
  }
  if (name == "seed") {
    if (value == "off" || value == "none") {
      knobs_.seed.reset();
      return "seed = off";
    }
    auto v = parse_number<uint64_t>(value);
    if (!v) return bad("a whole number or 'off'");
    knobs_.seed = *v;
    return "seed = " + std::to_string(*v);
  }
  return "/set: unknown knob '" + name +
         "'; use temperature, top_p, top_k, max_tokens, repetition_penalty, seed, history, "
         "ignore_eos or model";
}

ChatAction ChatSession::handle_line(const std::string& raw) {
  ChatAction a;
  const std::string line = trim(raw);
  if (line.empty()) return a;  // kInfo with nothing to print: a blank line does nothing
  if (line[0] != '/') {
    a.kind = ChatAction::Kind::kAsk;
    if (!system_.empty()) a.messages.push_back({"system", system_});
    // Whole turns only, so the model never sees an answer without its question.
    size_t keep = std::min(turns_.size(), static_cast<size_t>(history_turns_) * 2);
    a.messages.insert(a.messages.end(), turns_.end() - static_cast<std::ptrdiff_t>(keep),
                      turns_.end());
    a.messages.push_back({"user", line});
    return a;
  }
  std::istringstream in(line);
  std::string cmd;
  in >> cmd;
  std::string rest;
  std::getline(in, rest);
  rest = trim(rest);
  if (cmd == "/quit" || cmd == "/exit") {
    a.kind = ChatAction::Kind::kQuit;
  } else if (cmd == "/reset") {
    turns_.clear();
    a.info = "(conversation cleared)";
  } else if (cmd == "/system") {
    system_ = rest;
    a.info = rest.empty() ? "(system prompt cleared)" : "(system prompt set)";
  } else if (cmd == "/set") {
    std::istringstream kv(rest);
    std::string name, value, extra;
    kv >> name >> value >> extra;
    a.info = name.empty() || value.empty() || !extra.empty() ? "usage: /set NAME VALUE"
                                                             : set_knob(name, value);
  } else if (cmd == "/show") {
    a.info = knobs_.describe() + "\nhistory: " + std::to_string(turns_.size() / 2) +
             " turns kept of at most " + std::to_string(history_turns_) +
             "\nsystem: " + (system_.empty() ? std::string("(none)") : system_);
  } else if (cmd == "/help") {
    a.info = trim(help());
  } else {
    a.info = "unknown command " + cmd + "; /help lists them";
  }
  return a;
}

void ChatSession::record_answer(const std::string& question, const std::string& answer) {
  turns_.push_back({"user", question});
  turns_.push_back({"assistant", answer});
  // Turns older than the window are never sent again; dropping them bounds memory.
  size_t max_msgs = static_cast<size_t>(history_turns_) * 2;
  if (turns_.size() > max_msgs) {
    turns_.erase(turns_.begin(), turns_.end() - static_cast<std::ptrdiff_t>(max_msgs));
  }
}

}  // namespace ps
