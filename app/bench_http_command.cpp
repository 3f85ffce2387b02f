// `pagedserve bench serve | prefix`: the benches that load a running server over HTTP
// (bench/README.md). Split from bench_command.cpp, which holds the in-process offline bench and
// the flags every mode shares (bench_command_internal.h).
//   serve:   an HTTP load generator against a running server, over a sweep of concurrencies.
//   prefix:  TTFT with a long shared system prompt, cold vs warm prefix cache.
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "app/bench_command_internal.h"
#include "bench/plot.h"
#include "bench/prefix_bench.h"
#include "bench/serve_bench.h"
#include "bench/sse_client.h"

namespace ps::bench_cli {
namespace {

// Flags common to serve and prefix: where the server is and how long to wait for it.
ServeBenchOptions serve_options(const Flags& flags) {
  ServeBenchOptions o;
  o.url = flags.str("url", o.url);
  // The load generator is for your own server: a typo must not aim it at someone else's.
  const bool loopback = o.url.rfind("http://127.", 0) == 0 ||
                        o.url.rfind("http://localhost", 0) == 0 ||
                        o.url.rfind("http://[::1]", 0) == 0;
  if (!loopback && !flags.on("allow-remote")) {
    throw UsageError("--url " + o.url +
                     " is not a loopback http:// address; pass --allow-remote to load a server on "
                     "another host");
  }
  o.model = flags.str("served-model", "");
  o.api_key = flags.str("api-key", "");
  o.max_duration_s = flags.f64("max-duration", o.max_duration_s);
  o.request_timeout_s = flags.f64("request-timeout", o.request_timeout_s);
  if (!(o.max_duration_s > 0) || !(o.request_timeout_s > 0)) {
    throw UsageError("flags --max-duration and --request-timeout must be > 0 seconds");
  }
  o.seed = static_cast<uint64_t>(flags.i64("seed", 0));
  o.progress = !flags.on("no-progress");
  return o;
}

std::vector<int32_t> concurrency_levels(const Flags& flags) {
  std::vector<int32_t> levels;
  if (auto list = flags.opt("concurrency")) {
    std::stringstream ss(*list);
    std::string item;
    while (std::getline(ss, item, ',')) {
      char* end = nullptr;
      const long v = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || v < 1 || v > 4096) {
        throw UsageError("--concurrency " + *list + ": expected a list like 1,4,16,64 (1-4096)");
      }
      levels.push_back(static_cast<int32_t>(v));
    }
  } else {
    levels.push_back(count_flag(flags, "max-concurrency", 0, 0));  // 0: no limit
  }
  return levels;
}

}  // namespace

int bench_serve(int argc, char** argv) {
  Flags flags(
      argc, argv, 3,
      {"url", "served-model", "api-key", "num-prompts", "input-len", "output-len", "range-ratio",
       "dataset", "vocab-size", "seed", "max-concurrency", "concurrency", "request-rate", "arrival",
       "max-duration", "request-timeout", "json", "plot", "lora-mix"},
      {"no-progress", "allow-remote"});
  ServeBenchOptions o = serve_options(flags);
  o.model_mix = name_list(flags, "lora-mix");
  if (!o.model_mix.empty() && flags.has("served-model")) {
    throw UsageError("--served-model and --lora-mix both pick the model; give one");
  }
  const std::string arrival = flags.str("arrival", flags.has("request-rate") ? "poisson" : "burst");
  o.rate = flags.f64("request-rate", 0);
  if (arrival == "burst") {
    o.arrival = Arrival::kBurst;
  } else if (arrival == "fixed" || arrival == "poisson") {
    o.arrival = arrival == "fixed" ? Arrival::kFixedRate : Arrival::kPoisson;
    if (!(o.rate > 0)) throw UsageError("--arrival " + arrival + " needs --request-rate R > 0");
  } else {
    throw UsageError("--arrival must be burst, fixed or poisson, got '" + arrival + "'");
  }
  const std::vector<int32_t> levels = concurrency_levels(flags);
  check_server(o);

  CompletionClient client(o.url, o.request_timeout_s, o.api_key);
  const Workload w = workload_from_flags(
      flags, count_flag(flags, "vocab-size", 6400, 4), [&](const std::string& text) {
        std::string error;
        auto body = client.post_json("/tokenize", json{{"prompt", text}}.dump(), &error);
        if (!body) throw std::runtime_error("--dataset needs the server's /tokenize: " + error);
        return json::parse(*body).at("tokens").get<std::vector<int32_t>>();
      });
  print_workload(w);
  if (!o.model_mix.empty())
    std::printf("models: %s, round-robin\n", flags.str("lora-mix", "").c_str());
  std::printf(
      "server %s, arrivals %s%s\n", o.url.c_str(), arrival.c_str(),
      o.arrival == Arrival::kBurst ? "" : (" at " + std::to_string(o.rate) + " req/s").c_str());

  json report = {{"url", o.url},
                 {"models", o.model_mix},
                 {"arrival", arrival},
                 {"request_rate", o.rate},
                 {"requests", w.size()},
                 {"prompt_tokens", w.prompt_tokens()},
                 {"expected_output_tokens", w.output_tokens()},
                 {"levels", json::array()}};
  std::vector<LevelReport> results;
  print_level_header();
  for (int32_t c : levels) {
    results.push_back(run_serve_level(o, w, c));
    print_level(results.back());
    report["levels"].push_back(to_json(results.back()));
  }
  write_json(flags, report);
  if (auto png = flags.opt("plot")) plot_levels(results, *png);
  size_t failed = 0;
  for (const auto& r : results) failed += r.failed;
  return failed == 0 ? 0 : 1;
}

int bench_prefix(int argc, char** argv) {
  Flags flags(argc, argv, 3,
              {"url", "served-model", "api-key", "num-prompts", "prefix-len", "suffix-len",
               "output-len", "vocab-size", "seed", "max-duration", "request-timeout", "json"},
              {"no-progress", "allow-remote"});
  ServeBenchOptions o = serve_options(flags);
  PrefixBenchOptions p;
  p.num_prompts = count_flag(flags, "num-prompts", p.num_prompts);
  p.prefix_len = count_flag(flags, "prefix-len", p.prefix_len);
  p.suffix_len = count_flag(flags, "suffix-len", p.suffix_len);
  p.output_len = count_flag(flags, "output-len", p.output_len);
  p.vocab_size = count_flag(flags, "vocab-size", p.vocab_size, 4);
  p.seed = o.seed;
  check_server(o);
  std::printf(
      "prefix scenario: %d requests, %d shared prompt tokens + %d own, %d output tokens, "
      "one at a time\n",
      p.num_prompts, p.prefix_len, p.suffix_len, p.output_len);
  PrefixReport r = run_prefix_bench(o, p);
  print_prefix_report(r);
  json report = to_json(r);
  report["url"] = o.url;
  report["num_prompts"] = p.num_prompts;
  report["prefix_len"] = p.prefix_len;
  report["suffix_len"] = p.suffix_len;
  report["output_len"] = p.output_len;
  write_json(flags, report);
  return r.cold.failed + r.warm.failed == 0 ? 0 : 1;
}

}  // namespace ps::bench_cli
