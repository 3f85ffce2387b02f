// The harmony and qwen3_coder tool-call formats (tool_call_parser.h): a HarmonyReader's or an
// XmlToolReader's pieces as content and OpenAI tool calls. Split from tool_call_parser.cpp, whose
// JSON-object parser the other formats share.
#include "chat/tool_call_parser.h"

namespace ps::chat {

ToolStreamDelta ToolCallParser::from_harmony(const std::vector<HarmonyPiece>& pieces) {
  ToolStreamDelta out;
  for (const HarmonyPiece& p : pieces) {
    switch (p.kind) {
      case HarmonyPiece::Kind::kReasoning:
      case HarmonyPiece::Kind::kContent:
        out.content += p.text;
        break;
      case HarmonyPiece::Kind::kCallStart: {
        // The request's functions are "functions.NAME"; another recipient keeps its whole name.
        std::string name = p.text;
        if (name.rfind("functions.", 0) == 0) name.erase(0, 10);
        calls_.push_back({new_id_(), name, ""});
        ToolCallDelta d;
        d.index = static_cast<int32_t>(calls_.size() - 1);
        d.id = calls_.back().id;
        d.name = std::move(name);
        out.calls.push_back(std::move(d));
        break;
      }
      case HarmonyPiece::Kind::kCallArguments: {
        if (calls_.empty()) break;  // the reader starts every call first
        calls_.back().arguments += p.text;
        const auto index = static_cast<int32_t>(calls_.size() - 1);
        if (out.calls.empty() || out.calls.back().index != index) {
          ToolCallDelta d;
          d.index = index;
          out.calls.push_back(std::move(d));
        }
        out.calls.back().arguments += p.text;
        break;
      }
      case HarmonyPiece::Kind::kCallEnd:
        break;
    }
  }
  return out;
}

ToolStreamDelta ToolCallParser::from_xml(const std::vector<XmlToolPiece>& pieces) {
  ToolStreamDelta out;
  for (const XmlToolPiece& p : pieces) {
    if (p.kind == XmlToolPiece::Kind::kContent) {
      out.content += p.text;
      continue;
    }
    ToolCallDelta d;
    if (p.kind == XmlToolPiece::Kind::kCallStart) {
      calls_.push_back({new_id_(), p.text, ""});
      d.id = calls_.back().id;
      d.name = p.text;
    } else if (!calls_.empty()) {  // the reader starts every call first
      calls_.back().arguments = p.text;
      d.arguments = p.text;
    }
    d.index = static_cast<int32_t>(calls_.size()) - 1;
    if (d.index >= 0) out.calls.push_back(std::move(d));
  }
  return out;
}

}  // namespace ps::chat
