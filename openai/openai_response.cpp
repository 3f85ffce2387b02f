#include "openai/openai_response.h"

#include <algorithm>
#include <chrono>
#include <random>

namespace ps {
namespace {

using nlohmann::json;

json null_or(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

// JSON has no -inf; vLLM's convention of a large negative number keeps clients' parsers happy.
double finite_logprob(float lp) {
  return std::max(static_cast<double>(lp), -9999.0);
}

json byte_list(const std::string& s) {
  json out = json::array();
  for (unsigned char c : s) out.push_back(static_cast<int>(c));
  return out;
}

const char* object_name(Endpoint e, bool chunk) {
  if (e == Endpoint::kCompletion) return "text_completion";
  return chunk ? "chat.completion.chunk" : "chat.completion";
}

// Chat format: {"content": [{token, logprob, bytes, top_logprobs: [...]}], "refusal": null}.
json chat_logprobs(const std::vector<TokenLogprob>& lps, const TokenBytes& bytes) {
  json content = json::array();
  for (const auto& lp : lps) {
    std::string b = bytes(lp.token_id);
    json top = json::array();
    for (const auto& [id, value] : lp.top) {
      std::string tb = bytes(id);
      top.push_back({{"token", tb}, {"logprob", finite_logprob(value)}, {"bytes", byte_list(tb)}});
    }
    content.push_back({{"token", b},
                       {"logprob", finite_logprob(lp.logprob)},
                       {"bytes", byte_list(b)},
                       {"top_logprobs", std::move(top)}});
  }
  // refusal: null, as OpenAI sends it (its OpenAPI document requires the field).
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

// Legacy completions format: parallel lists, top_logprobs as {token: logprob} maps.
json completion_logprobs(const std::vector<TokenLogprob>& lps, const TokenBytes& bytes,
                         int64_t* text_offset) {
  json tokens = json::array(), token_lps = json::array(), tops = json::array(),
       offsets = json::array();
  for (const auto& lp : lps) {
    std::string b = bytes(lp.token_id);
    tokens.push_back(b);
    token_lps.push_back(finite_logprob(lp.logprob));
    json top = json::object();
    top[b] = finite_logprob(lp.logprob);
    for (const auto& [id, value] : lp.top) top[bytes(id)] = finite_logprob(value);
    tops.push_back(std::move(top));
    offsets.push_back(*text_offset);
    *text_offset += static_cast<int64_t>(b.size());
  }
  return {{"tokens", std::move(tokens)},
          {"token_logprobs", std::move(token_lps)},
          {"top_logprobs", std::move(tops)},
          {"text_offset", std::move(offsets)}};
}

// Echo with logprobs: the prompt's tokens in the legacy lists, before the output's. The first
// prompt token has no context to be scored in: null, as OpenAI sent it.
json echoed_logprobs(const PromptSide& prompt, const std::vector<TokenLogprob>& output,
                     const TokenBytes& bytes, int64_t* text_offset) {
  json lists = {{"tokens", json::array()},
                {"token_logprobs", json::array()},
                {"top_logprobs", json::array()},
                {"text_offset", json::array()}};
  for (size_t i = 0; i < prompt.ids.size(); ++i) {
    const std::string b = bytes(prompt.ids[i]);
    lists["tokens"].push_back(b);
    lists["text_offset"].push_back(*text_offset);
    *text_offset += static_cast<int64_t>(b.size());
    if (i == 0 || i > prompt.logprobs.size()) {
      lists["token_logprobs"].push_back(nullptr);
      lists["top_logprobs"].push_back(nullptr);
      continue;
    }
    const TokenLogprob& lp = prompt.logprobs[i - 1];
    lists["token_logprobs"].push_back(finite_logprob(lp.logprob));
    json top = json::object();
    top[b] = finite_logprob(lp.logprob);
    for (const auto& [id, value] : lp.top) top[bytes(id)] = finite_logprob(value);
    lists["top_logprobs"].push_back(std::move(top));
  }
  json out = completion_logprobs(output, bytes, text_offset);
  for (auto& [key, values] : out.items()) {
    for (auto& v : values) lists[key].push_back(std::move(v));
  }
  return lists;
}

// vLLM's prompt_logprobs: null for the first prompt token, then per token a map from token id
// to {logprob, rank, decoded_token} holding the prompt's token and the best alternatives.
json prompt_logprobs_json(const PromptSide& prompt, const TokenBytes& bytes) {
  json list = json::array();
  list.push_back(nullptr);
  for (size_t i = 0; i < prompt.logprobs.size(); ++i) {
    const TokenLogprob& lp = prompt.logprobs[i];
    json entry = json::object();
    int32_t rank = 0;
    for (const auto& [id, value] : lp.top) {
      entry[std::to_string(id)] = {
          {"logprob", finite_logprob(value)}, {"rank", ++rank}, {"decoded_token", bytes(id)}};
    }
    entry[std::to_string(lp.token_id)] = {{"logprob", finite_logprob(lp.logprob)},
                                          {"rank", lp.rank},
                                          {"decoded_token", bytes(lp.token_id)}};
    list.push_back(std::move(entry));
  }
  return list;
}

json logprobs_json(Endpoint e, const std::vector<TokenLogprob>& lps, const TokenBytes& bytes,
                   int64_t* text_offset) {
  return e == Endpoint::kChat ? chat_logprobs(lps, bytes)
                              : completion_logprobs(lps, bytes, text_offset);
}

std::string random_hex(size_t n) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* digits = "0123456789abcdef";
  std::string out(n, '0');
  for (auto& c : out) c = digits[rng() % 16];
  return out;
}

}  // namespace

ResponseMeta new_response_meta(Endpoint endpoint, std::string model) {
  ResponseMeta m;
  m.endpoint = endpoint;
  m.id = (endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-") + random_hex(24);
  m.created = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  m.model = std::move(model);
  return m;
}

std::string finish_reason_name(FinishReason reason) {
  return to_string(reason);
}

json error_json(const ApiError& error) {
  return {{"error",
           {{"message", error.message},
            {"type", error.type},
            {"param", null_or(error.param)},
            {"code", null_or(error.code)}}}};
}

json usage_json(const Usage& usage) {
  return {{"prompt_tokens", usage.prompt_tokens},
          {"completion_tokens", usage.completion_tokens},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", usage.cached_tokens}}}};
}

json completion_body(const ResponseMeta& meta, const std::vector<ChoiceOutput>& choices,
                     const Usage& usage, bool with_logprobs, const TokenBytes& bytes) {
  json list = json::array();
  for (const auto& c : choices) {
    int64_t offset = 0;
    json choice = {{"index", c.index}, {"finish_reason", c.finish_reason}};
    const bool echo = meta.endpoint == Endpoint::kCompletion && c.prompt.echo;
    choice["logprobs"] = !with_logprobs ? json(nullptr)
                         : echo         ? echoed_logprobs(c.prompt, c.logprobs, bytes, &offset)
                                        : logprobs_json(meta.endpoint, c.logprobs, bytes, &offset);
    if (c.prompt.with_logprobs) choice["prompt_logprobs"] = prompt_logprobs_json(c.prompt, bytes);
    if (meta.endpoint == Endpoint::kChat) {
      json message = {{"role", "assistant"}};
      const bool null_content = (c.reasoning_parsed || c.tools_parsed) && c.text.empty();
      message["content"] = null_content ? json(nullptr) : json(c.text);
      // OpenAI's schema requires the field; we never refuse.
      message["refusal"] = nullptr;
      if (c.reasoning) message["reasoning_content"] = *c.reasoning;
      if (!c.tool_calls.empty()) {
        json calls = json::array();
        for (const chat::ToolCall& t : c.tool_calls) {
          calls.push_back({{"id", t.id},
                           {"type", "function"},
                           {"function", {{"name", t.name}, {"arguments", t.arguments}}}});
        }
        message["tool_calls"] = std::move(calls);
      }
      choice["message"] = std::move(message);
    } else {
      choice["text"] = echo ? c.prompt.text + c.text : c.text;
    }
    list.push_back(std::move(choice));
  }
  return {{"id", meta.id},
          {"object", object_name(meta.endpoint, false)},
          {"created", meta.created},
          {"model", meta.model},
          {"choices", std::move(list)},
          {"usage", usage_json(usage)}};
}

json stream_chunk(const ResponseMeta& meta, const ChunkDelta& delta, bool usage_field,
                  const TokenBytes& bytes, int64_t* text_offset) {
  json choice = {{"index", delta.index}};
  if (meta.endpoint == Endpoint::kChat) {
    json d = json::object();
    if (delta.role_delta) {
      d["role"] = "assistant";
      d["refusal"] = nullptr;
    }
    if (!delta.reasoning.empty()) d["reasoning_content"] = delta.reasoning;
    if (delta.role_delta || !delta.text.empty()) d["content"] = delta.text;
    if (!delta.tool_calls.empty()) {
      json calls = json::array();
      for (const chat::ToolCallDelta& t : delta.tool_calls) {
        json call = {{"index", t.index}};
        if (!t.id.empty()) {
          call["id"] = t.id;
          call["type"] = "function";
          call["function"] = {{"name", t.name}, {"arguments", t.arguments}};
        } else {
          call["function"] = {{"arguments", t.arguments}};
        }
        calls.push_back(std::move(call));
      }
      d["tool_calls"] = std::move(calls);
    }
    choice["delta"] = std::move(d);
  } else {
    choice["text"] = delta.text;
  }
  // A choice's first chunk carries the echoed prompt (completions) and prompt_logprobs.
  const PromptSide* prompt = delta.prompt;
  const bool echo = prompt && prompt->echo && meta.endpoint == Endpoint::kCompletion;
  if (echo) choice["text"] = prompt->text + delta.text;
  choice["logprobs"] = !delta.logprobs ? json(nullptr)
                       : echo ? echoed_logprobs(*prompt, *delta.logprobs, bytes, text_offset)
                              : logprobs_json(meta.endpoint, *delta.logprobs, bytes, text_offset);
  if (prompt && prompt->with_logprobs)
    choice["prompt_logprobs"] = prompt_logprobs_json(*prompt, bytes);
  choice["finish_reason"] = delta.finish_reason ? json(*delta.finish_reason) : json(nullptr);
  json chunk = {{"id", meta.id},
                {"object", object_name(meta.endpoint, true)},
                {"created", meta.created},
                {"model", meta.model},
                {"choices", json::array({std::move(choice)})}};
  // With include_usage, OpenAI sends "usage": null on every chunk but the last.
  if (usage_field) chunk["usage"] = nullptr;
  return chunk;
}

json usage_chunk(const ResponseMeta& meta, const Usage& usage) {
  return {{"id", meta.id},
          {"object", object_name(meta.endpoint, true)},
          {"created", meta.created},
          {"model", meta.model},
          {"choices", json::array()},
          {"usage", usage_json(usage)}};
}

}  // namespace ps
