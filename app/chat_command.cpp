// `pagedserve chat`: a terminal chat, in-process on a model directory (--model) or as a client
// of a running server (--url). Answers stream as they are generated; Ctrl-C stops the current
// answer (or clears the line at the prompt), Ctrl-D or /quit leaves.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/chat_backend.h"
#include "app/chat_session.h"
#include "app/chat_template_flag.h"
#include "app/commands.h"
#include "app/engine_flags.h"
#include "app/flags.h"
#include "app/lora_flags.h"
#include "checkpoint/loader.h"
#include "engine/engine.h"
#include "tokenizer/tokenizer.h"

namespace ps {
namespace {

const char* kChatUsage =
    "usage: pagedserve chat (--model DIR | --url http://HOST:PORT [--api-key KEY])\n"
    "  [--system TEXT] [--history 8 (turns kept, 0 = none)] [--temperature 0.7] [--top-p 1]\n"
    "  [--top-k 0] [--max-tokens 256] [--repetition-penalty 1] [--seed S]\n"
    "  [--chat-template chatml|llama3|plain|FILE] [--reasoning-parser "
    "auto|qwen3|deepseek_r1|harmony|none]\n"
    "  [engine flags, with --model: see serve --help, --lora-modules NAME=PATH ... too]\n";

std::atomic<bool> g_interrupted{false};

void on_sigint(int) {
  g_interrupted.store(true);
}

// SIGINT without SA_RESTART: a read() waiting at the prompt returns EINTR, so Ctrl-C there
// is seen at once instead of after the next Enter.
void install_sigint() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
}

enum class ReadStatus { kLine, kEof, kInterrupted };

// Line input straight from fd 0 (not std::cin, whose state a signal would leave broken).
class LineReader {
 public:
  ReadStatus read(std::string* line) {
    while (true) {
      size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        *line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return ReadStatus::kLine;
      }
      char chunk[4096];
      ssize_t n = ::read(0, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) {
        buf_.clear();  // the terminal discards the typed line on Ctrl-C too
        return ReadStatus::kInterrupted;
      }
      if (n <= 0) {
        if (buf_.empty()) return ReadStatus::kEof;
        *line = std::move(buf_);  // a last line without a newline
        buf_.clear();
        return ReadStatus::kLine;
      }
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  std::string buf_;
};

std::unique_ptr<ChatBackend> in_process_backend(const Flags& flags,
                                                const std::vector<LoraModuleFlag>& lora_modules) {
  const std::string dir = model_dir_from_flags(flags);
  auto renderer =
      std::make_shared<const chat::ChatRenderer>(chat_renderer_from_flags(flags, dir, "chat"));
  const std::optional<chat::ReasoningStyle> reasoning = reasoning_from_flags(flags, *renderer);
  std::fprintf(stderr, "loading %s ...\n", dir.c_str());
  auto tokenizer = std::make_shared<const Tokenizer>(Tokenizer::from_file(dir + "/tokenizer.json"));
  LoadedModel model = load_model_with_lora(flags, dir);  // --lora works here as in serve
  // The engine's threads (and the BLAS threads they start) inherit a blocked SIGINT, so
  // Ctrl-C always lands on the chat loop's thread and interrupts its read.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  EngineConfig config = engine_config_from_flags(flags);
  config.max_loras = max_loras_for(flags, lora_modules.size());
  auto engine = std::make_shared<Engine>(std::move(model), tokenizer, config);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  std::string name = std::filesystem::path(dir).filename().string();
  if (name.empty()) name = std::filesystem::path(dir).parent_path().filename().string();
  load_lora_modules(*engine, lora_modules, max_lora_rank_from_flags(flags), name);
  return make_engine_chat_backend(std::move(engine), renderer, reasoning, name);
}

ChatKnobs knobs_from_flags(const Flags& flags) {
  ChatKnobs k;
  k.temperature = static_cast<float>(flags.f64("temperature", k.temperature));
  k.top_p = static_cast<float>(flags.f64("top-p", k.top_p));
  k.top_k = static_cast<int32_t>(flags.i64("top-k", k.top_k));
  k.max_tokens = static_cast<int32_t>(flags.i64("max-tokens", k.max_tokens));
  k.repetition_penalty = static_cast<float>(flags.f64("repetition-penalty", k.repetition_penalty));
  if (flags.has("seed")) k.seed = static_cast<uint64_t>(flags.i64("seed", 0));
  return k;
}

// Model text goes to a terminal: control bytes (ESC, CR, ...) from a model that emits them would
// move the cursor or change colours, so all but newline and tab are shown as '?'.
void print_model_text(std::string_view piece) {
  std::string out(piece);
  for (char& c : out) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) c = '?';
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

// A reasoning model's thinking is printed dimmed (ANSI SGR 2) above its answer, so the two
// read apart; the answer starts on its own line.
constexpr const char* kDim = "\x1b[2m";
constexpr const char* kUndim = "\x1b[0m";
class ReplyPrinter {
 public:
  void operator()(std::string_view piece, bool reasoning) {
    if (reasoning && !dim_) {
      std::fputs(kDim, stdout);
      dim_ = true;
    } else if (!reasoning && dim_) {
      std::fputs(kUndim, stdout);
      std::fputs("\n", stdout);
      dim_ = false;
    }
    print_model_text(piece);
  }
  void end() {
    if (dim_) std::fputs(kUndim, stdout);
    dim_ = false;
    std::fflush(stdout);
  }

 private:
  bool dim_ = false;
};

// "[26 prompt + 12 tokens, 40 ms to first token, 95.1 tok/s, finish length, confidence low 0.310]"
std::string stats_line(const ChatReply& r) {
  char buf[256];
  // Decode speed: the tokens after the first over the time after the first, so the prompt's
  // cost (already in the time to first token) is not counted twice.
  double decode_s = r.total_s - r.ttft_s;
  double rate = r.completion_tokens > 1 && decode_s > 0 ? (r.completion_tokens - 1) / decode_s : 0;
  std::string conf = "";
  if (r.prob_count > 0) {
    double mean = r.prob_sum / r.prob_count;
    const char* label = mean > 0.8 ? "high" : mean > 0.5 ? "medium" : "low";
    char c[64];
    std::snprintf(c, sizeof c, ", confidence %s %.3f", label, mean);
    conf = c;
  }
  // A stopped server stream ends before its usage chunk: the prompt size is then unknown.
  const std::string prompt = r.prompt_tokens > 0 ? std::to_string(r.prompt_tokens) : "?";
  std::snprintf(
      buf, sizeof buf, "[%s prompt + %d tokens, %.0f ms to first token, %.1f tok/s, finish %s%s]",
      prompt.c_str(), r.completion_tokens, r.ttft_s * 1000, rate, r.finish.c_str(), conf.c_str());
  return buf;
}

}  // namespace

int chat_command(int argc, char** argv) {
  std::set<std::string> valued = {
      "model",       "url",           "api-key",         "system",     "history",
      "temperature", "top-p",         "top-k",           "max-tokens", "repetition-penalty",
      "seed",        "chat-template", "reasoning-parser"};
  std::set<std::string> switches = {"help"};
  valued.insert({"max-loras", "max-lora-rank"});
  const std::vector<LoraModuleFlag> lora_modules = take_lora_modules(argc, argv, 2);
  Flags flags = engine_command_flags(argc, argv, 2, valued, switches);
  if (!lora_modules.empty() && flags.has("url")) {
    throw UsageError(
        "--lora-modules loads adapters into an in-process engine (--model); with "
        "--url, /set model NAME picks one the server serves");
  }
  if (flags.on("help")) {
    std::fputs(kChatUsage, stdout);
    std::fputs(ChatSession::help(), stdout);
    return 0;
  }
  if (!flags.positional().empty()) {
    throw UsageError("unexpected argument '" + flags.positional()[0] + "'");
  }
  if (flags.has("url") && flags.has("model")) {
    throw UsageError("give --model DIR (in-process) or --url http://HOST:PORT, not both");
  }
  const int64_t history = flags.i64("history", 8);
  if (history < 0) throw UsageError("--history must be 0 (none) or more turns");
  ChatSession session(knobs_from_flags(flags), flags.str("system", ""),
                      static_cast<int32_t>(history));

  install_sigint();
  const char* env_key = std::getenv("PAGEDSERVE_API_KEY");
  std::unique_ptr<ChatBackend> backend =
      flags.has("url") ? make_http_chat_backend(flags.str("url", ""),
                                                flags.str("api-key", env_key ? env_key : ""))
                       : in_process_backend(flags, lora_modules);
  std::printf("chatting with %s (%s). /help for commands, Ctrl-C stops an answer, Ctrl-D quits.\n",
              backend->model_name().c_str(),
              flags.has("url") ? flags.str("url", "").c_str() : "in-process");

  LineReader reader;
  while (true) {
    std::printf("you> ");
    std::fflush(stdout);
    std::string line;
    ReadStatus st = reader.read(&line);
    if (st == ReadStatus::kEof) {
      std::printf("\n");
      break;
    }
    if (st == ReadStatus::kInterrupted) {
      g_interrupted.store(false);
      std::printf("\n(Ctrl-D or /quit leaves)\n");
      continue;
    }
    ChatAction action = session.handle_line(line);
    if (action.kind == ChatAction::Kind::kQuit) break;
    if (action.kind == ChatAction::Kind::kInfo) {
      if (!action.info.empty()) std::printf("%s\n", action.info.c_str());
      continue;
    }
    g_interrupted.store(false);
    const std::string& model = session.knobs().model;  // a LoRA adapter chosen by /set model
    std::printf("%s> ", (model.empty() ? backend->model_name() : model).c_str());
    std::fflush(stdout);
    ReplyPrinter printer;
    ChatReply reply = backend->complete(
        action.messages, session.knobs(),
        [&printer](std::string_view piece, bool reasoning) { printer(piece, reasoning); },
        g_interrupted);
    printer.end();
    g_interrupted.store(false);
    if (!reply.error.empty()) {
      std::printf("\nerror: %s\n", reply.error.c_str());
      continue;  // a failed question does not join the history
    }
    // After Ctrl-C the terminal has already echoed "^C"; only the line needs ending.
    std::printf("\n%s\n", stats_line(reply).c_str());
    session.record_answer(action.messages.back().content, reply.text);
  }
  return 0;
}

}  // namespace ps
