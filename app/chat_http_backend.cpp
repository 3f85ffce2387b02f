// The client chat backend: POST /v1/chat/completions with stream: true to a running server.
// The request runs on a worker thread so that the chat loop can stop it at any moment, even
// while the server sends nothing (a queued request): stopping closes the connection, which
// the server notices and cancels within a step.
#include <httplib.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "app/chat_backend.h"

namespace ps {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// What the worker learned so far; guarded by `mu`.
struct StreamShared {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<TextPiece> pending;  // received, not yet shown, in order
  ChatReply reply;
  std::string error_body;  // a non-200 answer's body
  int status = 0;
  bool done = false;
  httplib::Error http_error = httplib::Error::Success;
};

// Splits the SSE byte stream into `data:` payloads.
class SseParser {
 public:
  template <typename F>
  void feed(const char* data, size_t len, F&& on_data) {
    buf_.append(data, len);
    size_t end;
    while ((end = buf_.find('\n')) != std::string::npos) {
      std::string line = buf_.substr(0, end);
      buf_.erase(0, end + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.rfind("data:", 0) == 0) {
        size_t start = line.size() > 5 && line[5] == ' ' ? 6 : 5;
        on_data(line.substr(start));
      }
    }
  }

 private:
  std::string buf_;
};

std::string error_message(const std::string& body, int status) {
  json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    return "HTTP " + std::to_string(status) + ": " + j["error"].value("message", body);
  }
  return "HTTP " + std::to_string(status) + ": " + body;
}

class HttpChatBackend : public ChatBackend {
 public:
  HttpChatBackend(std::string url, std::string api_key)
      : url_(std::move(url)), api_key_(std::move(api_key)) {
    httplib::Client cli(url_);
    cli.set_connection_timeout(5);
    cli.set_read_timeout(30);
    auto res = cli.Get("/v1/models", headers());
    if (!res) {
      throw std::runtime_error("cannot reach " + url_ + " (" + httplib::to_string(res.error()) +
                               "): is `pagedserve serve` running there? (--url)");
    }
    if (res->status != 200) {
      throw std::runtime_error(url_ + "/v1/models: " + error_message(res->body, res->status) +
                               (res->status == 401 ? " (pass --api-key)" : ""));
    }
    json j = json::parse(res->body, nullptr, false);
    if (!j.is_object() || !j.contains("data") || !j["data"].is_array() || j["data"].empty()) {
      throw std::runtime_error(url_ + "/v1/models: no model listed; is this a pagedserve server?");
    }
    model_ = j["data"][0].value("id", "");
  }

  std::string model_name() const override { return model_; }

  ChatReply complete(const std::vector<ChatMessage>& messages, const ChatKnobs& knobs,
                     const TextSink& on_text, const std::atomic<bool>& stop) override {
    json msgs = json::array();
    for (const auto& m : messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
    json body = {{"model", knobs.model.empty() ? model_ : knobs.model},
                 {"messages", std::move(msgs)},
                 {"stream", true},
                 {"stream_options", {{"include_usage", true}}},
                 {"logprobs", true},
                 {"temperature", knobs.temperature},
                 {"top_p", knobs.top_p},
                 {"top_k", knobs.top_k},
                 {"max_tokens", knobs.max_tokens},
                 {"repetition_penalty", knobs.repetition_penalty}};
    if (knobs.seed) body["seed"] = *knobs.seed;
    if (knobs.ignore_eos) body["ignore_eos"] = true;

    StreamShared s;
    std::atomic<bool> cancel{false};
    httplib::Client cli(url_);
    cli.set_connection_timeout(5);
    cli.set_read_timeout(600);  // a long prompt or a busy server may be silent for a while
    cli.set_tcp_nodelay(true);  // headers and body go out without waiting on a delayed ACK
    const auto t0 = Clock::now();
    std::thread worker = start_worker(cli, body.dump(), s, cancel, t0);

    std::unique_lock<std::mutex> lock(s.mu);
    while (true) {
      s.cv.wait_for(lock, std::chrono::milliseconds(50));
      if (!s.pending.empty()) {
        std::vector<TextPiece> pieces = std::move(s.pending);
        s.pending.clear();
        lock.unlock();
        for (const TextPiece& piece : pieces) on_text(piece.text, piece.reasoning);
        lock.lock();
      }
      if (s.done) break;
      if (stop.load() && !cancel.load()) {
        cancel.store(true);
        lock.unlock();
        cli.stop();  // breaks a read that is waiting for a silent server
        lock.lock();
      }
    }
    lock.unlock();
    worker.join();

    ChatReply reply = std::move(s.reply);
    reply.total_s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (cancel.load()) {
      reply.finish = "stopped";
    } else if (s.status != 0 && s.status != 200) {
      reply.error = error_message(s.error_body, s.status);
    } else if (s.http_error != httplib::Error::Success) {
      reply.error =
          "lost the connection to " + url_ + " (" + httplib::to_string(s.http_error) + ")";
    } else if (reply.error.empty() && reply.finish.empty()) {
      reply.error = "the server closed the stream without a finish reason";
    }
    return reply;
  }

 private:
  httplib::Headers headers() const {
    httplib::Headers h;
    if (!api_key_.empty()) h.emplace("Authorization", "Bearer " + api_key_);
    return h;
  }

  std::thread start_worker(httplib::Client& cli, std::string body, StreamShared& s,
                           std::atomic<bool>& cancel, Clock::time_point t0) {
    // Ctrl-C must reach the chat loop's thread, not this one: the worker starts with SIGINT
    // blocked (a new thread inherits the mask of the thread that creates it).
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    std::thread t([this, &cli, body = std::move(body), &s, &cancel, t0] {
      httplib::Request req;
      req.method = "POST";
      req.path = "/v1/chat/completions";
      req.headers = headers();
      req.set_header("Content-Type", "application/json");
      req.body = body;
      SseParser sse;
      req.response_handler = [&](const httplib::Response& r) {
        std::lock_guard<std::mutex> lock(s.mu);
        s.status = r.status;
        return true;
      };
      req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
        if (cancel.load()) return false;
        std::lock_guard<std::mutex> lock(s.mu);
        if (s.status != 200) {
          s.error_body.append(data, len);
          return true;
        }
        sse.feed(data, len, [&](const std::string& payload) { on_event(payload, s, t0); });
        s.cv.notify_one();
        return true;
      };
      httplib::Response res;
      httplib::Error err = httplib::Error::Success;
      cli.send(req, res, err);
      std::lock_guard<std::mutex> lock(s.mu);
      if (!res.body.empty() && s.status != 200) s.error_body = res.body;
      s.http_error = err;
      s.done = true;
      s.cv.notify_one();
    });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return t;
  }

  // One `data:` payload of the stream; `s.mu` is held.
  static void on_event(const std::string& payload, StreamShared& s, Clock::time_point t0) {
    if (payload == "[DONE]") return;
    json j = json::parse(payload, nullptr, false);
    if (!j.is_object()) return;
    ChatReply& r = s.reply;
    if (j.contains("error") && j["error"].is_object()) {
      r.error = j["error"].value("message", std::string("the server reported an error"));
      return;
    }
    if (j.contains("usage") && j["usage"].is_object()) {
      r.prompt_tokens = j["usage"].value("prompt_tokens", 0);
      r.completion_tokens = j["usage"].value("completion_tokens", r.completion_tokens);
    }
    if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return;
    const json& c = j["choices"][0];
    if (c.contains("logprobs") && c["logprobs"].is_object() && c["logprobs"].contains("content") &&
        c["logprobs"]["content"].is_array()) {
      for (const json& t : c["logprobs"]["content"]) {
        if (r.prob_count == 0) {
          r.ttft_s = std::chrono::duration<double>(Clock::now() - t0).count();
        }
        r.prob_sum += std::exp(t.value("logprob", 0.0));
        ++r.prob_count;
        ++r.completion_tokens;
      }
    }
    if (c.contains("delta") && c["delta"].is_object()) {
      const json& d = c["delta"];
      // The server's reasoning parser sends the reasoning first, then the answer.
      if (d.contains("reasoning_content") && d["reasoning_content"].is_string()) {
        std::string text = d["reasoning_content"].get<std::string>();
        r.reasoning += text;
        s.pending.push_back({text, true});
      }
      if (d.contains("content") && d["content"].is_string()) {
        std::string text = d["content"].get<std::string>();
        r.text += text;
        if (!text.empty()) s.pending.push_back({text, false});
      }
    }
    if (c.contains("finish_reason") && c["finish_reason"].is_string()) {
      r.finish = c["finish_reason"].get<std::string>();
    }
  }

  std::string url_, api_key_, model_;
};

}  // namespace

std::unique_ptr<ChatBackend> make_http_chat_backend(const std::string& url,
                                                    const std::string& api_key) {
  std::string base = url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.rfind("http://", 0) != 0) {
    throw std::runtime_error("--url " + url + ": give http://HOST:PORT (https is not supported)");
  }
  if (base.find('/', 7) != std::string::npos) {
    throw std::runtime_error("--url " + url + ": give the server root, http://HOST:PORT, no path");
  }
  return std::make_unique<HttpChatBackend>(base, api_key);
}

}  // namespace ps
