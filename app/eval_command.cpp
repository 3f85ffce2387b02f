// `pagedserve-train eval`: greedy replies to the questions of one or more JSONL files (train/
// chat_data.h schema), scored against their answers by exact match and character similarity.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>
#include <tuple>

#include "app/commands.h"
#include "app/engine_flags.h"
#include "app/flags.h"
#include "chat/chat_renderer.h"
#include "engine/engine.h"
#include "train/chat_data.h"
#include "train/eval.h"

namespace ps {
namespace {

constexpr const char* kEvalUsage =
    "usage: pagedserve-train eval [--model DIR] [--data FILE.jsonl[,FILE2.jsonl...]]\n"
    "  [--limit N] [--max-tokens 128] [--show N] [--naive] [engine flags]\n"
    "  Greedy replies to each file's questions; prints exact match and character similarity\n"
    "  (1 - edit distance / length, over Unicode characters) per file. Default data: the tiny\n"
    "  chat model's training and held-out sets. --show N prints N mismatches per file;\n"
    "  --naive decodes with the no-cache reference forward instead of the engine.\n";

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = std::min(s.find(',', start), s.size());
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// All replies at once through the engine: it batches them, which is what makes evaluating a
// thousand questions take seconds rather than minutes.
// Prompts are rendered with the model's own chat template, as the server renders them.
std::vector<std::string> engine_replies(Engine& engine, const chat::ChatRenderer& renderer,
                                        const std::vector<ChatExample>& examples,
                                        int32_t max_tokens) {
  std::vector<std::unique_ptr<RequestStream>> streams;
  for (const ChatExample& ex : examples) {
    Request r;
    r.prompt_ids = prompt_tokens(engine.tokenizer(), ex, renderer);
    r.params.max_tokens = max_tokens;
    r.params.temperature = 0.0f;
    SubmitResult s = engine.submit(std::move(r));
    if (auto* err = std::get_if<SubmitError>(&s)) {
      throw std::runtime_error("question \"" + ex.question() + "\": " + err->message);
    }
    streams.push_back(std::move(std::get<std::unique_ptr<RequestStream>>(s)));
  }
  std::vector<std::string> texts(examples.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    RequestOutput ev;
    while (!streams[i]->finished()) {
      if (!streams[i]->next(&ev, std::chrono::milliseconds(100))) continue;
      texts[i] += ev.text;
      if (ev.finish && *ev.finish != FinishReason::kStop && *ev.finish != FinishReason::kLength) {
        throw std::runtime_error("question \"" + examples[i].question() + "\" ended with " +
                                 to_string(*ev.finish) + ": " + ev.finish_detail);
      }
    }
  }
  return texts;
}

void print_summary(const std::string& name, const EvalSummary& s, int64_t show) {
  std::printf("%-28s %5zu questions  exact match %6.2f%% (%lld)  char similarity %.4f\n",
              name.c_str(), s.items.size(), 100.0 * s.exact_rate(), static_cast<long long>(s.exact),
              s.mean_similarity);
  // Per kind (topic, arithmetic, ...), when the file labels its lines.
  std::map<std::string, std::tuple<int64_t, int64_t, double>> kinds;
  for (const EvalItem& item : s.items) {
    auto& [n, exact, sim] = kinds[item.kind];
    ++n;
    exact += item.exact ? 1 : 0;
    sim += item.similarity;
  }
  for (const auto& [kind, k] : kinds) {
    if (kind.empty()) continue;
    const auto& [n, exact, sim] = k;
    std::printf("  %-26s %5lld questions  exact match %6.2f%% (%lld)  char similarity %.4f\n",
                kind.c_str(), static_cast<long long>(n), 100.0 * double(exact) / double(n),
                static_cast<long long>(exact), sim / double(n));
  }
  for (const EvalItem& item : s.items) {
    if (show <= 0) break;
    if (item.exact) continue;
    std::printf("  Q: %s\n  expected: %s\n  got:      %s  (similarity %.3f)\n",
                item.question.c_str(), item.target.c_str(), item.output.c_str(), item.similarity);
    --show;
  }
}

}  // namespace

int eval_command(int argc, char** argv) {
  std::set<std::string> valued = {"model", "data", "limit", "max-tokens", "show"};
  std::set<std::string> switches = {"naive", "help"};
  Flags flags = engine_command_flags(argc, argv, 2, valued, switches);
  if (flags.on("help")) {
    std::fputs(kEvalUsage, stdout);
    return 0;
  }
  if (!flags.positional().empty()) {
    throw UsageError("unexpected argument '" + flags.positional()[0] + "'");
  }
  const std::string source = PAGEDSERVE_SOURCE_DIR;
  const std::vector<std::string> files = split_commas(flags.str(
      "data", source + "/data/tiny_chat/train.jsonl," + source + "/data/tiny_chat/heldout.jsonl"));
  if (files.empty()) throw UsageError("--data names no file");
  const int64_t limit = flags.i64("limit", 0);
  const int64_t max_tokens = flags.i64("max-tokens", 128);
  if (max_tokens < 1) throw UsageError("flag --max-tokens must be at least 1");
  const int64_t show = flags.i64("show", 0);

  const std::string dir = model_dir_from_flags(flags);
  auto tokenizer = std::make_shared<const Tokenizer>(Tokenizer::from_file(dir + "/tokenizer.json"));
  // The naive forward (train/) computes on fp32 weights; the engine takes --dtype.
  LoadedModel model =
      flags.on("naive") ? load_model(dir) : load_model(dir, load_options_from_flags(flags));
  std::string notice;
  const chat::ChatRenderer renderer = chat::ChatRenderer::load("", dir, &notice);
  if (!notice.empty()) std::fprintf(stderr, "eval: %s\n", notice.c_str());
  std::unique_ptr<Engine> engine;
  if (!flags.on("naive")) {
    engine = std::make_unique<Engine>(model, tokenizer, engine_config_from_flags(flags));
  }
  std::printf("eval: model %s (%s)\n", dir.c_str(), engine ? "engine" : "naive forward");
  for (const std::string& file : files) {
    std::vector<ChatExample> examples = read_chat_jsonl(file);
    if (limit > 0 && static_cast<int64_t>(examples.size()) > limit) {
      examples.resize(static_cast<size_t>(limit));
    }
    const auto t0 = std::chrono::steady_clock::now();
    EvalSummary s;
    if (engine) {
      const std::vector<std::string> texts =
          engine_replies(*engine, renderer, examples, static_cast<int32_t>(max_tokens));
      double total = 0;
      for (size_t i = 0; i < examples.size(); ++i) {
        s.items.push_back(score_reply(examples[i], texts[i]));
        s.exact += s.items.back().exact ? 1 : 0;
        total += s.items.back().similarity;
      }
      s.mean_similarity = s.items.empty() ? 0 : total / static_cast<double>(s.items.size());
    } else {
      s = evaluate(*model.weights, *tokenizer, examples, static_cast<int32_t>(max_tokens));
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    print_summary(std::filesystem::path(file).filename().string(), s, show);
    std::fprintf(stderr, "eval: %s took %.1f s\n", file.c_str(), secs);
  }
  return 0;
}

}  // namespace ps
