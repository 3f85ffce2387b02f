#pragma once
// gpt-oss's "harmony" reply format, read as text. Its markers are special tokens, so a harmony
// reply is decoded with skip_special_tokens off (api/generation.cpp) and this reader removes
// them. A reply is a run of messages
//   [<|start|>ROLE][ to=RECIPIENT]<|channel|>CHANNEL[ to=RECIPIENT][ TYPE][<|constrain|>TYPE]
//   <|message|>BODY
// each ended by <|end|>, <|call|> or <|return|>, or by the end of the reply (the stop tokens
// <|call|> and <|return|> are not in the text). The first message's "<|start|>assistant" is the
// chat template's generation prompt. Bodies go by channel and recipient:
//   a recipient (any channel)          -> a tool call to it ("functions.NAME" for the
//                                         request's tools), its arguments the body;
//   analysis                           -> reasoning;
//   final, commentary with no recipient
//   (a preamble), text outside messages -> content.
// Text that is not harmony at all (no header before it) is content, so a reply the model did not
// write in the format loses nothing.
//
// Streaming: feed() takes text deltas and returns what can be emitted now, in order; a marker
// split across deltas is held back until complete or ruled out, so no marker text is emitted.
// finish() flushes. A header cut off by the end of the reply is dropped (it is markup).
#include <string>
#include <string_view>
#include <vector>

namespace ps::chat {

struct HarmonyPiece {
  enum class Kind { kReasoning, kContent, kCallStart, kCallArguments, kCallEnd };
  Kind kind;
  std::string text;  // kCallStart: the recipient; kCallEnd: empty
};

class HarmonyReader {
 public:
  std::vector<HarmonyPiece> feed(std::string_view text);
  std::vector<HarmonyPiece> finish();
  // Whether an analysis message has begun (the reply then has reasoning, if empty).
  bool reached_reasoning() const { return reached_reasoning_; }

 private:
  enum class State {
    kHeader,   // reading a header up to <|message|>
    kBody,     // inside a message body
    kBetween,  // after a message's end marker
  };
  void run(std::vector<HarmonyPiece>& out, bool at_end);
  bool read_header(std::vector<HarmonyPiece>& out, bool at_end);
  bool read_body(std::vector<HarmonyPiece>& out, bool at_end);
  bool read_between(bool at_end);
  void begin_message(std::string_view header, std::vector<HarmonyPiece>& out);
  void end_message(std::vector<HarmonyPiece>& out);
  void emit_body(std::string_view text, std::vector<HarmonyPiece>& out);

  State state_ = State::kHeader;
  bool role_first_ = false;  // the header starts with a role (after <|start|>)
  std::string channel_, recipient_;
  bool plain_ = false;  // the body is text outside any header: content
  bool reached_reasoning_ = false;
  std::string pending_;
};

}  // namespace ps::chat
