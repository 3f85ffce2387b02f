#include "engine/engine.h"

#include "engine/engine_core.h"
#include "engine/stream_state.h"

namespace ps {

RequestStream::RequestStream(std::shared_ptr<StreamState> state, std::weak_ptr<EngineCore> core)
    : state_(std::move(state)), core_(std::move(core)) {}

RequestStream::~RequestStream() {
  // A reader that goes away early (client disconnected, handler returned) must not leave its
  // sequence running: cancelling an already finished request is a no-op in the engine.
  if (!finish_seen_) cancel();
}

RequestId RequestStream::id() const {
  return state_->id;
}

bool RequestStream::next(RequestOutput* out, std::chrono::milliseconds timeout) {
  if (finish_seen_) return false;
  if (!state_->pop(out, timeout)) return false;
  if (out->finish) finish_seen_ = true;
  return true;
}

void RequestStream::cancel() {
  if (auto core = core_.lock()) core->cancel(state_->id);
}

bool RequestStream::finished() const {
  return finish_seen_;
}

Engine::Engine(LoadedModel model, std::shared_ptr<const Tokenizer> tokenizer, EngineConfig config)
    : core_(std::make_shared<EngineCore>(std::move(model), std::move(tokenizer), config)) {
  core_->start();
}

Engine::~Engine() = default;

SubmitResult Engine::submit(Request request) {
  return core_->submit(std::move(request));
}
void Engine::cancel(RequestId id) {
  core_->cancel(id);
}
EngineStats Engine::stats() const {
  return core_->stats();
}

const std::string& Engine::kernel_summary() const {
  return core_->kernel_summary();
}
const std::shared_ptr<LoraRegistry>& Engine::loras() const {
  return core_->loras();
}
const ModelConfig& Engine::model_config() const {
  return core_->model_config();
}
const Tokenizer& Engine::tokenizer() const {
  return *core_->tokenizer();
}
std::shared_ptr<const Tokenizer> Engine::tokenizer_ptr() const {
  return core_->tokenizer();
}
int32_t Engine::max_model_len() const {
  return core_->max_model_len();
}
std::optional<Engine::CacheSnapshot> Engine::cache_snapshot(
    std::chrono::milliseconds timeout) const {
  return core_->cache_snapshot(timeout);
}
void Engine::pause() {
  core_->set_paused(true);
}
void Engine::resume() {
  core_->set_paused(false);
}
int64_t Engine::shutdown(std::chrono::milliseconds drain) {
  return core_->shutdown(drain);
}

}  // namespace ps
