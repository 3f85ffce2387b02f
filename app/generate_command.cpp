// `pagedserve generate`: offline generation through the engine (or the naive oracle with
// --naive). One --prompt streams its text to stdout; --prompts FILE.jsonl runs every line as its
// own request in one batch and prints one JSON line per prompt, in input order.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/commands.h"
#include "app/engine_flags.h"
#include "app/flags.h"
#include "engine/engine.h"
#ifdef PAGEDSERVE_WITH_REFERENCE
#include "reference/naive_generate.h"
#endif

namespace ps {
namespace {

using json = nlohmann::json;

struct PromptJob {
  std::string prompt;
  SamplingParams params;
};

SamplingParams params_from_flags(const Flags& flags) {
  SamplingParams p;
  p.max_tokens = static_cast<int32_t>(flags.i64("max-tokens", 64));
  p.temperature = static_cast<float>(flags.f64("temperature", 0.0));
  p.top_p = static_cast<float>(flags.f64("top-p", 1.0));
  p.top_k = static_cast<int32_t>(flags.i64("top-k", 0));
  if (flags.has("seed")) p.seed = static_cast<uint64_t>(flags.i64("seed", 0));
  p.ignore_eos = flags.on("ignore-eos");
  return p;
}

// A JSONL line: {"prompt": "...", and any of max_tokens, temperature, top_p, top_k, min_p,
// seed, ignore_eos, stop, repetition_penalty, presence_penalty, frequency_penalty}.
PromptJob job_from_line(const std::string& file, int line_no, const std::string& line,
                        const SamplingParams& defaults) {
  auto where = file + ":" + std::to_string(line_no);
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw UsageError(where + ": not a JSON object");
  if (!j.contains("prompt") || !j["prompt"].is_string()) {
    throw UsageError(where + ": needs a string field \"prompt\"");
  }
  PromptJob job{j["prompt"].get<std::string>(), defaults};
  try {
    SamplingParams& p = job.params;
    if (j.contains("max_tokens")) p.max_tokens = j["max_tokens"].get<int32_t>();
    if (j.contains("temperature")) p.temperature = j["temperature"].get<float>();
    if (j.contains("top_p")) p.top_p = j["top_p"].get<float>();
    if (j.contains("top_k")) p.top_k = j["top_k"].get<int32_t>();
    if (j.contains("min_p")) p.min_p = j["min_p"].get<float>();
    if (j.contains("seed")) p.seed = j["seed"].get<uint64_t>();
    if (j.contains("ignore_eos")) p.ignore_eos = j["ignore_eos"].get<bool>();
    if (j.contains("repetition_penalty"))
      p.repetition_penalty = j["repetition_penalty"].get<float>();
    if (j.contains("presence_penalty")) p.presence_penalty = j["presence_penalty"].get<float>();
    if (j.contains("frequency_penalty")) p.frequency_penalty = j["frequency_penalty"].get<float>();
    if (j.contains("stop")) {
      if (j["stop"].is_string())
        p.stop = {j["stop"].get<std::string>()};
      else
        p.stop = j["stop"].get<std::vector<std::string>>();
    }
  } catch (const json::exception& e) {
    throw UsageError(where + ": wrong field type: " + e.what());
  }
  return job;
}

std::vector<PromptJob> read_jobs(const std::string& path, const SamplingParams& defaults) {
  std::ifstream in(path);
  if (!in) throw UsageError("--prompts " + path + ": cannot open file");
  std::vector<PromptJob> jobs;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    jobs.push_back(job_from_line(path, line_no, line, defaults));
  }
  if (jobs.empty()) throw UsageError("--prompts " + path + ": no prompts in file");
  return jobs;
}

int run_naive(const LoadedModel& model, const Tokenizer& tok, const std::string& prompt,
              const SamplingParams& p) {
#ifndef PAGEDSERVE_WITH_REFERENCE
  // The oracle is libtorch code; the serving binary links none (docs/architecture.md).
  throw UsageError(
      "--naive runs the PyTorch reference, which is in pagedserve-train: run "
      "pagedserve-train generate --naive ...");
#else
  std::vector<int32_t> ids = tok.encode(prompt, /*add_special_tokens=*/true);
  std::vector<int32_t> eos = p.ignore_eos ? std::vector<int32_t>{} : model.config.eos_token_ids;
  std::vector<int32_t> out =
      naive_generate(*model.weights, ids, p.max_tokens, p.temperature, p.seed.value_or(0), eos);
  std::printf("%s\n", tok.decode(out, true).c_str());
  return 0;
#endif
}

}  // namespace

int generate_command(int argc, char** argv) {
  std::set<std::string> valued = {"model",       "prompt", "prompts", "max-tokens",
                                  "temperature", "top-p",  "top-k",   "seed"};
  std::set<std::string> switches = {"ignore-eos", "naive", "help"};
  Flags flags = engine_command_flags(argc, argv, 2, valued, switches);
  if (flags.on("help") || (!flags.has("prompt") && !flags.has("prompts"))) {
    std::fprintf(stderr,
                 "usage: pagedserve generate --model DIR (--prompt TEXT | --prompts FILE.jsonl)\n"
                 "  [--max-tokens 64] [--temperature 0] [--top-p 1] [--top-k 0] [--seed S]\n"
                 "  [--ignore-eos] [--naive] [--max-num-seqs 64] [--max-batched-tokens 2048]\n"
                 "  [--block-size 16] [--num-blocks N | --kv-cache-memory 512M] "
                 "[--no-prefix-caching]\n");
    if (flags.on("help")) return 0;
    throw UsageError("give --prompt TEXT or --prompts FILE.jsonl");
  }
  const std::string dir = model_dir_from_flags(flags);
  const SamplingParams defaults = params_from_flags(flags);
  std::vector<PromptJob> jobs = flags.has("prompts")
                                    ? read_jobs(flags.str("prompts", ""), defaults)
                                    : std::vector<PromptJob>{{flags.str("prompt", ""), defaults}};

  auto tokenizer = std::make_shared<const Tokenizer>(Tokenizer::from_file(dir + "/tokenizer.json"));
  LoadedModel model = load_model_with_lora(flags, dir);
  if (flags.on("naive")) {
    if (jobs.size() != 1) throw UsageError("--naive runs one --prompt only");
    return run_naive(model, *tokenizer, jobs[0].prompt, jobs[0].params);
  }
  Engine engine(std::move(model), tokenizer, engine_config_from_flags(flags));

  const bool single = !flags.has("prompts");
  std::vector<std::unique_ptr<RequestStream>> streams;
  for (size_t i = 0; i < jobs.size(); ++i) {
    // A raw prompt gets the tokenizer's BOS/EOS, as /v1/completions and vLLM's generate() do.
    SubmitResult r = engine.submit(
        Request{tokenizer->encode(jobs[i].prompt, /*add_special_tokens=*/true), jobs[i].params});
    if (auto* err = std::get_if<SubmitError>(&r)) {
      throw UsageError("prompt " + std::to_string(i + 1) + ": " + err->message);
    }
    streams.push_back(std::move(std::get<std::unique_ptr<RequestStream>>(r)));
  }

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> texts(jobs.size());
  std::vector<RequestOutput> last(jobs.size());
  size_t done = 0;
  int64_t tokens = 0;
  while (done < streams.size()) {
    bool progressed = false;
    for (size_t i = 0; i < streams.size(); ++i) {
      RequestOutput ev;
      while (!streams[i]->finished() && streams[i]->next(&ev, std::chrono::milliseconds(0))) {
        progressed = true;
        tokens += static_cast<int64_t>(ev.token_ids.size());
        texts[i] += ev.text;
        if (single) {
          std::fputs(ev.text.c_str(), stdout);
          std::fflush(stdout);
        }
        if (ev.finish) {
          last[i] = ev;
          ++done;
        }
      }
    }
    if (!progressed) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (single) {
    std::printf("\n");
  } else {
    for (size_t i = 0; i < jobs.size(); ++i) {
      json line = {{"index", i},
                   {"text", texts[i]},
                   {"finish_reason", to_string(*last[i].finish)},
                   {"prompt_tokens", last[i].prompt_tokens},
                   {"cached_tokens", last[i].cached_tokens},
                   {"completion_tokens", last[i].completion_tokens}};
      std::printf("%s\n", line.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    }
  }
  EngineStats s = engine.stats();
  std::fprintf(stderr,
               "generate: %zu requests, %lld tokens in %.2f s (%.1f tok/s), %llu steps, "
               "max %d seqs/step, %llu preemptions\n",
               jobs.size(), static_cast<long long>(tokens), secs, tokens / std::max(secs, 1e-9),
               static_cast<unsigned long long>(s.steps_total), s.max_seqs_in_step,
               static_cast<unsigned long long>(s.preemptions_total));
  return 0;
}

}  // namespace ps
