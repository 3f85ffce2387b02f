#pragma once
// JSON text and Server-Sent Events framing for OpenAI-style streams.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ps {

// Serializes without ever throwing: invalid UTF-8 (a token that is a lone continuation byte,
// say) becomes U+FFFD instead of failing the request with a 500 (docs/anchors.md).
std::string dump_json(const nlohmann::json& j);

// One SSE event carrying `j`: "data: {...}\n\n". JSON text never contains a raw newline, so a
// single data line is a complete event.
std::string sse_event(const nlohmann::json& j);

// The terminator OpenAI clients wait for.
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

}  // namespace ps
