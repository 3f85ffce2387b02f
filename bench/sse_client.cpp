#include "bench/sse_client.h"

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace ps {
namespace {

using json = nlohmann::json;

void set_timeouts(httplib::Client& cli, double timeout_s) {
  const auto sec = static_cast<time_t>(timeout_s);
  const auto usec = static_cast<time_t>((timeout_s - static_cast<double>(sec)) * 1e6);
  cli.set_connection_timeout(sec, usec);
  cli.set_read_timeout(sec, usec);
  cli.set_write_timeout(sec, usec);
}

// The first 300 bytes of a body, for error messages.
std::string head(const std::string& s) {
  return s.size() <= 300 ? s : s.substr(0, 300) + "...";
}

}  // namespace

struct CompletionClient::Impl {
  httplib::Client cli;
  Impl(const std::string& url, double timeout_s, const std::string& api_key) : cli(url) {
    set_timeouts(cli, timeout_s);
    cli.set_keep_alive(true);
    // httplib writes a request's headers and body separately; with Nagle on, the body waits
    // for the server's (delayed, up to 40 ms) ACK of the headers, which showed up as ~40 ms of
    // extra TTFT at concurrency 1. curl and Node's http set TCP_NODELAY too.
    cli.set_tcp_nodelay(true);
    if (!api_key.empty()) cli.set_bearer_token_auth(api_key.c_str());
  }
};

CompletionClient::CompletionClient(const std::string& url, double timeout_s,
                                   const std::string& api_key)
    : impl_(std::make_unique<Impl>(url, timeout_s, api_key)) {
  if (!impl_->cli.is_valid()) {
    throw std::runtime_error("--url " + url + ": not a valid http://host:port address");
  }
}

CompletionClient::~CompletionClient() = default;

RequestRecord CompletionClient::stream_completion(const std::vector<int32_t>& prompt,
                                                  int32_t max_tokens, const std::string& model) {
  json body = {{"prompt", prompt}, {"max_tokens", max_tokens},
               {"temperature", 0}, {"ignore_eos", true},
               {"stream", true},   {"stream_options", {{"include_usage", true}}}};
  if (!model.empty()) body["model"] = model;

  RequestRecord r;
  SseParser parser;
  std::string error_body;
  bool done = false, have_text = false;
  BenchClock::time_point last_chunk;
  auto on_data = [&](const std::string& payload) {
    const auto now = BenchClock::now();
    if (payload == "[DONE]") {
      done = true;
      r.e2e_s = secs(r.start, now);
      return;
    }
    json j = json::parse(payload, nullptr, false);
    if (j.is_discarded()) {
      r.error = "unparsable SSE data: " + head(payload);
      return;
    }
    if (j.contains("error")) {
      r.error = "error event: " + head(j["error"].dump());
      return;
    }
    if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
      r.prompt_tokens = u->value("prompt_tokens", 0);
      r.completion_tokens = u->value("completion_tokens", 0);
      if (auto d = u->find("prompt_tokens_details"); d != u->end() && d->is_object()) {
        r.cached_tokens = d->value("cached_tokens", 0);
      }
    }
    const json& choices = j.value("choices", json::array());
    for (const auto& c : choices) {
      if (c.contains("finish_reason") && c["finish_reason"].is_string()) {
        r.finish_reason = c["finish_reason"].get<std::string>();
      }
      if (c.value("text", "").empty()) continue;
      if (!have_text) {
        r.ttft_s = secs(r.start, now);
        have_text = true;
      } else {
        r.itl_s.push_back(secs(last_chunk, now));
      }
      last_chunk = now;
      ++r.chunks;
    }
  };

  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.response_handler = [&](const httplib::Response& res) {
    r.http_status = res.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (r.http_status != 200) {
      error_body.append(data, n);
    } else {
      parser.feed(data, n, on_data);
    }
    return true;
  };
  r.start = BenchClock::now();
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  const bool sent = impl_->cli.send(req, res, err);
  if (!sent) {
    r.error = "transport: " + httplib::to_string(err);
  } else if (r.http_status != 200) {
    r.error = "HTTP " + std::to_string(r.http_status) + ": " + head(error_body);
  } else if (r.error.empty() && !done) {
    r.error = "stream ended without [DONE]";
  } else if (r.error.empty() && r.completion_tokens == 0) {
    r.error = "no usage chunk (the server must honour stream_options.include_usage)";
  }
  if (!have_text && r.error.empty()) r.ttft_s = r.e2e_s;  // all text held back to the end
  r.ok = r.error.empty();
  return r;
}

std::optional<std::string> CompletionClient::get(const std::string& path, std::string* error) {
  auto res = impl_->cli.Get(path.c_str());
  if (!res) {
    *error = "GET " + path + ": " + httplib::to_string(res.error());
    return std::nullopt;
  }
  if (res->status != 200) {
    *error = "GET " + path + ": HTTP " + std::to_string(res->status) + " " + head(res->body);
    return std::nullopt;
  }
  return res->body;
}

std::optional<std::string> CompletionClient::post_json(const std::string& path,
                                                       const std::string& body,
                                                       std::string* error) {
  auto res = impl_->cli.Post(path.c_str(), body, "application/json");
  if (!res) {
    *error = "POST " + path + ": " + httplib::to_string(res.error());
    return std::nullopt;
  }
  if (res->status != 200) {
    *error = "POST " + path + ": HTTP " + std::to_string(res->status) + " " + head(res->body);
    return std::nullopt;
  }
  return res->body;
}

std::optional<double> prometheus_value(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line;
  std::optional<double> sum;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.find(' ');
    if (sp == std::string::npos || line.compare(0, sp, name) != 0 || sp != name.size()) continue;
    sum = sum.value_or(0) + std::strtod(line.c_str() + sp + 1, nullptr);
  }
  return sum;
}

}  // namespace ps
