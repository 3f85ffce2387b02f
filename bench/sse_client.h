#pragma once
// One HTTP connection to a pagedserve (or any OpenAI-compatible) server, sending streamed
// /v1/completions requests and timing each chunk as it arrives.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_clock.h"

namespace ps {

struct RequestRecord {
  bool ok = false;
  std::string error;  // why it failed: HTTP status and body, transport error, or an SSE error
  int http_status = 0;
  BenchClock::time_point start;
  double ttft_s = 0;              // send -> first chunk with text
  double e2e_s = 0;               // send -> [DONE]
  std::vector<double> itl_s;      // gaps between consecutive chunks with text
  int64_t prompt_tokens = 0;      // from the final usage chunk
  int64_t completion_tokens = 0;  // from the final usage chunk
  int64_t cached_tokens = 0;      // prompt tokens the server found in its prefix cache
  int32_t chunks = 0;             // chunks with text
  std::string finish_reason;
};

// Incremental SSE parser: feed it bytes as they arrive; it calls back once per `data:` payload.
class SseParser {
 public:
  template <typename F>
  void feed(const char* data, size_t n, F&& on_data) {
    // CRLF line ends become LF, so one search finds every event boundary.
    for (size_t i = 0; i < n; ++i) {
      if (data[i] != '\r') buf_.push_back(data[i]);
    }
    size_t pos;
    while ((pos = buf_.find("\n\n")) != std::string::npos) {
      std::string event = buf_.substr(0, pos);
      buf_.erase(0, pos + 2);
      size_t line_start = 0;
      while (line_start <= event.size()) {
        size_t end = event.find('\n', line_start);
        if (end == std::string::npos) end = event.size();
        std::string line = event.substr(line_start, end - line_start);
        if (line.rfind("data:", 0) == 0) {
          size_t s = 5;
          if (s < line.size() && line[s] == ' ') ++s;
          on_data(line.substr(s));
        }
        line_start = end + 1;
      }
    }
  }

 private:
  std::string buf_;
};

class CompletionClient {
 public:
  // url: "http://host:port". timeout_s bounds connecting and each read.
  CompletionClient(const std::string& url, double timeout_s, const std::string& api_key);
  ~CompletionClient();
  CompletionClient(const CompletionClient&) = delete;
  CompletionClient& operator=(const CompletionClient&) = delete;

  // Greedy, ignore_eos, stream with include_usage: the server must generate exactly
  // max_tokens tokens. `model` may be empty (the server's only model).
  RequestRecord stream_completion(const std::vector<int32_t>& prompt, int32_t max_tokens,
                                  const std::string& model);

  // A GET or POST returning the body on status 200, nullopt otherwise (error set).
  std::optional<std::string> get(const std::string& path, std::string* error);
  std::optional<std::string> post_json(const std::string& path, const std::string& body,
                                       std::string* error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Sums the Prometheus samples named exactly `name` in a /metrics body; nullopt when absent.
std::optional<double> prometheus_value(const std::string& text, const std::string& name);

}  // namespace ps
