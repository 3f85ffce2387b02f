// The in-process chat backend: the engine runs in this process, requests go straight to it.
#include <chrono>
#include <cmath>

#include "app/chat_backend.h"
#include "engine/engine.h"
#include "engine/lora_registry.h"

namespace ps {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

class EngineChatBackend : public ChatBackend {
 public:
  EngineChatBackend(std::shared_ptr<Engine> engine,
                    std::shared_ptr<const chat::ChatRenderer> renderer,
                    std::optional<chat::ReasoningStyle> reasoning, std::string name)
      : engine_(std::move(engine)),
        renderer_(std::move(renderer)),
        reasoning_(reasoning),
        name_(std::move(name)) {}

  std::string model_name() const override { return name_; }

  ChatReply complete(const std::vector<ChatMessage>& messages, const ChatKnobs& knobs,
                     const TextSink& on_text, const std::atomic<bool>& stop) override {
    ChatReply reply;
    chat::ChatPromptRequest chat;
    for (const auto& m : messages)
      chat.messages.push_back({{"role", m.role}, {"content", m.content}});
    std::string prompt;
    try {
      prompt = renderer_->render(chat);
    } catch (const std::exception& e) {
      reply.error = std::string("the chat template failed: ") + e.what();
      return reply;
    }
    std::optional<chat::ReasoningParser> parser;
    if (reasoning_) parser.emplace(*reasoning_, prompt);
    auto emit = [&](const chat::ReasoningDelta& d) {
      reply.reasoning += d.reasoning;
      reply.text += d.content;
      if (!d.reasoning.empty()) on_text(d.reasoning, true);
      if (!d.content.empty()) on_text(d.content, false);
    };
    Request req{engine_->tokenizer().encode(prompt), knobs.to_params()};
    req.params.logprobs = 0;  // the chosen token's logprob, for the confidence figure
    // Harmony's channel markers are special tokens, which its parser reads and takes out.
    if (reasoning_ == chat::ReasoningStyle::kHarmony) req.params.skip_special_tokens = false;
    if (!knobs.model.empty() && knobs.model != name_) {
      req.lora = engine_->loras()->acquire(knobs.model);
      if (!req.lora) {
        reply.error = "no LoRA adapter named '" + knobs.model +
                      "' (load adapters with --lora-modules NAME=PATH; /set model off for the "
                      "base model)";
        return reply;
      }
    }
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
      if (parser) {
        emit(parser->feed(ev.text));
        if (ev.finish) emit(parser->finish());
      } else if (!ev.text.empty()) {
        reply.text += ev.text;
        on_text(ev.text, false);
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
  std::shared_ptr<const chat::ChatRenderer> renderer_;
  std::optional<chat::ReasoningStyle> reasoning_;
  std::string name_;
};

}  // namespace

std::unique_ptr<ChatBackend> make_engine_chat_backend(
    std::shared_ptr<Engine> engine, std::shared_ptr<const chat::ChatRenderer> renderer,
    std::optional<chat::ReasoningStyle> reasoning, std::string model_name) {
  return std::make_unique<EngineChatBackend>(std::move(engine), std::move(renderer), reasoning,
                                             std::move(model_name));
}

}  // namespace ps
