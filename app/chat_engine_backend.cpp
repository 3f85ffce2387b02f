// The in-process chat backend: the engine runs in this process, requests go straight to it.
#include <chrono>
#include <cmath>

#include "app/chat_backend.h"
#include "engine/engine.h"

namespace ps {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

class EngineChatBackend : public ChatBackend {
 public:
  EngineChatBackend(std::shared_ptr<Engine> engine, ChatTemplate tmpl, std::string name)
      : engine_(std::move(engine)), template_(tmpl), name_(std::move(name)) {}

  std::string model_name() const override { return name_; }

  ChatReply complete(const std::vector<ChatMessage>& messages, const ChatKnobs& knobs,
                     const TextSink& on_text, const std::atomic<bool>& stop) override {
    ChatReply reply;
    Request req{engine_->tokenizer().encode(template_.render(messages, true)), knobs.to_params()};
    req.params.logprobs = 0;  // the chosen token's logprob, for the confidence figure
    const auto t0 = Clock::now();
    SubmitResult submitted = engine_->submit(std::move(req));
    if (auto* err = std::get_if<SubmitError>(&submitted)) {
      reply.error = err->message;
      return reply;
    }
    auto& stream = std::get<std::unique_ptr<RequestStream>>(submitted);
    bool cancelled = false;
    while (!stream->finished()) {
      if (stop.load() && !cancelled) {
        stream->cancel();  // the engine still sends the finish event, which ends the loop
        cancelled = true;
      }
      RequestOutput ev;
      if (!stream->next(&ev, std::chrono::milliseconds(50))) continue;
      if (!ev.token_ids.empty() && reply.completion_tokens == 0) reply.ttft_s = seconds_since(t0);
      for (const TokenLogprob& lp : ev.logprobs) {
        reply.prob_sum += std::exp(static_cast<double>(lp.logprob));
        ++reply.prob_count;
      }
      reply.completion_tokens = ev.completion_tokens;
      if (!ev.text.empty()) {
        reply.text += ev.text;
        on_text(ev.text);
      }
      if (ev.finish) {
        reply.prompt_tokens = ev.prompt_tokens;
        if (*ev.finish == FinishReason::kError) {
          reply.error = "generation failed: " + ev.finish_detail;
        } else {
          reply.finish = cancelled ? "stopped" : to_string(*ev.finish);
        }
      }
    }
    reply.total_s = seconds_since(t0);
    return reply;
  }

 private:
  std::shared_ptr<Engine> engine_;
  ChatTemplate template_;
  std::string name_;
};

}  // namespace

std::unique_ptr<ChatBackend> make_engine_chat_backend(std::shared_ptr<Engine> engine,
                                                      ChatTemplate chat_template,
                                                      std::string model_name) {
  return std::make_unique<EngineChatBackend>(std::move(engine), chat_template,
                                             std::move(model_name));
}

}  // namespace ps
