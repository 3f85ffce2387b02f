#include "responses/response_events.h"

namespace ps::responses {

using nlohmann::json;

namespace {

// A message item before its first token: one output_text part, empty.
json empty_message() {
  return {{"type", "message"},
          {"id", new_id("msg_")},
          {"role", "assistant"},
          {"content",
           {{{"type", "output_text"},
             {"text", ""},
             {"annotations", json::array()},
             {"logprobs", json::array()}}}}};
}

}  // namespace

std::string ResponseEvents::event(const char* type, json fields) {
  fields["type"] = type;
  fields["sequence_number"] = sequence_++;
  return std::string("event: ") + type +
         "\ndata: " + fields.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

std::string ResponseEvents::start() {
  std::string out =
      event("response.created",
            {{"response", response_object(h_, "in_progress", json::array(), nullptr)}});
  out += event("response.in_progress",
               {{"response", response_object(h_, "in_progress", json::array(), nullptr)}});
  return out;
}

std::string ResponseEvents::open(Item kind, json item) {
  std::string out = close();
  open_ = kind;
  item_ = item;
  item["status"] = "in_progress";
  const size_t index = output_.size();
  out += event("response.output_item.added", {{"output_index", index}, {"item", item}});
  // Reasoning and message items hold one content part each (reasoning_text, output_text).
  if (kind == Item::kReasoning || kind == Item::kMessage) {
    out += event("response.content_part.added", {{"item_id", item_["id"]},
                                                 {"output_index", index},
                                                 {"content_index", 0},
                                                 {"part", item_["content"][0]}});
  }
  return out;
}

// The open item's closing events; output_item.done reports it completed unless its status was
// set (incomplete).
std::string ResponseEvents::close() {
  if (open_ == Item::kNone) return "";
  std::string out;
  const size_t index = output_.size();
  const json id = item_["id"];
  if (open_ == Item::kReasoning) {
    const json text = item_["content"][0]["text"];
    out += event("response.reasoning_text.done",
                 {{"item_id", id}, {"output_index", index}, {"content_index", 0}, {"text", text}});
    out += event("response.content_part.done", {{"item_id", id},
                                                {"output_index", index},
                                                {"content_index", 0},
                                                {"part", item_["content"][0]}});
    if (summary_) {
      // No summarizer runs here: the summary is the reasoning itself, in one part.
      const json part = {{"type", "summary_text"}, {"text", text}};
      auto summary_event = [&](const char* type, const char* key, json value) {
        return event(type, {{"item_id", id},
                            {"output_index", index},
                            {"summary_index", 0},
                            {key, std::move(value)}});
      };
      out += summary_event("response.reasoning_summary_part.added", "part",
                           {{"type", "summary_text"}, {"text", ""}});
      out += summary_event("response.reasoning_summary_text.delta", "delta", text);
      out += summary_event("response.reasoning_summary_text.done", "text", text);
      out += summary_event("response.reasoning_summary_part.done", "part", part);
      item_["summary"].push_back(part);
    }
  } else if (open_ == Item::kMessage) {
    const json part = item_["content"][0];
    out += event("response.output_text.done", {{"item_id", id},
                                               {"output_index", index},
                                               {"content_index", 0},
                                               {"text", part["text"]},
                                               {"logprobs", json::array()}});
    out += event("response.content_part.done",
                 {{"item_id", id}, {"output_index", index}, {"content_index", 0}, {"part", part}});
  } else {
    out += event("response.function_call_arguments.done", {{"item_id", id},
                                                           {"output_index", index},
                                                           {"name", item_["name"]},
                                                           {"arguments", item_["arguments"]}});
  }
  if (!item_.contains("status")) item_["status"] = "completed";
  out += event("response.output_item.done", {{"output_index", index}, {"item", item_}});
  output_.push_back(std::move(item_));
  item_ = nullptr;
  open_ = Item::kNone;
  return out;
}

std::string ResponseEvents::delta(const ChunkDelta& d) {
  std::string out;
  if (!d.reasoning.empty()) {
    if (open_ != Item::kReasoning) {
      out += open(Item::kReasoning, {{"type", "reasoning"},
                                     {"id", new_id("rs_")},
                                     {"summary", json::array()},
                                     {"content", {{{"type", "reasoning_text"}, {"text", ""}}}}});
    }
    item_["content"][0]["text"] = item_["content"][0]["text"].get<std::string>() + d.reasoning;
    reply_.reasoning = reply_.reasoning.value_or("") + d.reasoning;
    out += event("response.reasoning_text.delta", {{"item_id", item_["id"]},
                                                   {"output_index", output_.size()},
                                                   {"content_index", 0},
                                                   {"delta", d.reasoning}});
  }
  if (!d.text.empty()) {
    if (open_ != Item::kMessage) {
      out += open(Item::kMessage, empty_message());
    }
    item_["content"][0]["text"] = item_["content"][0]["text"].get<std::string>() + d.text;
    reply_.text += d.text;
    out += event("response.output_text.delta", {{"item_id", item_["id"]},
                                                {"output_index", output_.size()},
                                                {"content_index", 0},
                                                {"delta", d.text},
                                                {"logprobs", json::array()}});
  }
  for (const chat::ToolCallDelta& c : d.tool_calls) {
    if (open_ != Item::kFunctionCall || c.index != call_index_) {
      call_index_ = c.index;
      reply_.tool_calls.push_back({c.id, c.name, ""});
      out += open(Item::kFunctionCall, function_call_item(c.id, c.name, "", h_.namespaces));
    }
    if (c.arguments.empty()) continue;
    item_["arguments"] = item_["arguments"].get<std::string>() + c.arguments;
    reply_.tool_calls.back().arguments += c.arguments;
    out +=
        event("response.function_call_arguments.delta",
              {{"item_id", item_["id"]}, {"output_index", output_.size()}, {"delta", c.arguments}});
  }
  return out;
}

std::string ResponseEvents::finish(const std::string& finish_reason, const Usage& usage) {
  reply_.finish_reason = finish_reason;
  const bool incomplete = is_incomplete(finish_reason);
  std::string out;
  // A reply with no text and no calls still answers with a message, as a whole one does.
  if (open_ == Item::kNone && reply_.text.empty() && reply_.tool_calls.empty()) {
    out += open(Item::kMessage, empty_message());
  }
  if (incomplete && open_ != Item::kNone && open_ != Item::kFunctionCall) {
    item_["status"] = "incomplete";
  }
  out += close();
  const char* status = incomplete ? "incomplete" : "completed";
  final_ = response_object(h_, status, output_, usage_body(usage));
  out += event(incomplete ? "response.incomplete" : "response.completed", {{"response", final_}});
  return out;
}

std::string ResponseEvents::fail(const ApiError& e) {
  if (open_ != Item::kNone) item_["status"] = "incomplete";
  std::string out = close();
  final_ = response_object(h_, "failed", output_, nullptr, e);
  out += event("response.failed", {{"response", final_}});
  return out;
}

}  // namespace ps::responses
