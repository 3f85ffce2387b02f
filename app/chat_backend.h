#pragma once
// Where a terminal chat's answers come from: the engine in this process (--model DIR) or a
// running `pagedserve serve` (--url). Both stream text as it is generated and stop early when
// asked, so the chat loop does not care which one it has.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/chat_session.h"
#include "chat/chat_renderer.h"
#include "chat/chat_template.h"
#include "chat/reasoning_parser.h"

namespace ps {

class Engine;

struct ChatReply {
  std::string text;       // the answer
  std::string reasoning;  // what a reasoning model thought first (--reasoning-parser)
  std::string finish;     // "stop" | "length" | "stopped" (Ctrl-C); empty when error is set
  std::string error;      // what went wrong, e.g. the server's 400 message
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  double ttft_s = 0;    // request sent -> first token
  double total_s = 0;   // request sent -> finish
  double prob_sum = 0;  // sum of the chosen tokens' probabilities, for a confidence figure
  int32_t prob_count = 0;
};

// `reasoning`: the piece is the model's reasoning, shown apart from (and before) the answer.
using TextSink = std::function<void(std::string_view text, bool reasoning)>;
struct TextPiece {
  std::string text;
  bool reasoning = false;
};

class ChatBackend {
 public:
  virtual ~ChatBackend() = default;
  // Generates the assistant's answer to `messages`, calling `on_text` (on this thread) with
  // each new piece. Polls `stop` at least every 50 ms; once it is set the answer ends with
  // finish "stopped" and the server or engine frees the request.
  virtual ChatReply complete(const std::vector<ChatMessage>& messages, const ChatKnobs& knobs,
                             const TextSink& on_text, const std::atomic<bool>& stop) = 0;
  virtual std::string model_name() const = 0;
};

// Renders with `renderer` (as serve does) and splits reasoning when `reasoning` is set.
std::unique_ptr<ChatBackend> make_engine_chat_backend(
    std::shared_ptr<Engine> engine, std::shared_ptr<const chat::ChatRenderer> renderer,
    std::optional<chat::ReasoningStyle> reasoning, std::string model_name);
// `url`: http://HOST:PORT. Asks GET /v1/models for the model name; throws std::runtime_error
// saying what to check when the server cannot be reached.
std::unique_ptr<ChatBackend> make_http_chat_backend(const std::string& url,
                                                    const std::string& api_key);

}  // namespace ps
