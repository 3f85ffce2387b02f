#pragma once
// Qwen3.5's and Qwen3-Coder's tool-call format (vLLM's `qwen3_coder` parser), read as text:
//   <tool_call>
//   <function=NAME>
//   <parameter=KEY>
//   VALUE
//   </parameter>
//   ...
//   </function>
//   </tool_call>
// repeated; text outside calls is content. A value keeps its text (one newline after the opening
// tag and one before the closing tag are the template's layout, not the value) and becomes a
// JSON string, unless it is a JSON number, true, false, null, object or array, which is taken as
// that (the model writes {"a": 1} for an object parameter; a digits-only string parameter comes
// out as a number, as vLLM's parser gives it when the request's schema does not say "string").
//
// Streaming: feed() takes text deltas and returns what can be emitted now: content, a call's
// start once its name is complete, its arguments (one JSON object) once </function> arrives. A
// tag split across deltas is held back until complete or ruled out. A call that ends (or the
// reply ends) before its name is complete goes back to content as the text it was; one cut after
// its name keeps the parameters that were complete.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ps::chat {

struct XmlToolPiece {
  enum class Kind { kContent, kCallStart, kCallArguments };
  Kind kind;
  std::string text;  // kCallStart: the function's name; kCallArguments: a JSON object
};

class XmlToolReader {
 public:
  std::vector<XmlToolPiece> feed(std::string_view text);
  std::vector<XmlToolPiece> finish();

 private:
  enum class State {
    kContent,  // outside calls: looking for <tool_call>
    kOpen,     // after <tool_call>: white space, then <function=NAME>
    kParams,   // inside a named call: <parameter=...> ... </parameter>, then </function>
    kClosing,  // after </function>: white space, then </tool_call>
  };
  void run(std::vector<XmlToolPiece>& out, bool at_end);
  // One step of a state on pending_; false when it needs more text.
  bool content(std::vector<XmlToolPiece>& out, bool at_end);
  bool open(std::vector<XmlToolPiece>& out);
  bool params(std::vector<XmlToolPiece>& out, bool at_end);
  bool closing(bool at_end);
  void end_call(std::vector<XmlToolPiece>& out);

  State state_ = State::kContent;
  std::string pending_;  // content held back (a possible start tag), or the call's text so far
  std::vector<std::pair<std::string, std::string>> params_;
};

}  // namespace ps::chat
