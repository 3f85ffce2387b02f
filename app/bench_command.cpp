// `pagedserve bench offline | serve | prefix | accuracy`: the benchmark harness (bench/README.md).
//   offline: continuous batching vs single-request mode on one seeded workload, in-process,
//            with the machine's bandwidth and GEMM limits measured in the same run.
//   serve, prefix: the HTTP benches, bench_http_command.cpp.
//   accuracy: a precision against the fp32 reference, bench_accuracy_command.cpp.
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "app/bench_command_internal.h"
#include "app/bench_floors.h"
#include "app/commands.h"
#include "app/engine_flags.h"
#include "app/lora_flags.h"
#include "bench/offline_bench.h"
#include "bench/plot.h"
#include "bench/prefix_bench.h"
#include "bench/serve_bench.h"
#include "bench/speculative_bench.h"
#include "bench/sse_client.h"
#include "kernels/machine_probe.h"

namespace ps::bench_cli {

int32_t count_flag(const Flags& flags, const char* name, int64_t fallback, int64_t lo) {
  const int64_t v = flags.i64(name, fallback);
  if (v < lo || v > 100000) {
    throw UsageError(std::string("flag --") + name + " must be between " + std::to_string(lo) +
                     " and 100000, got " + std::to_string(v));
  }
  return static_cast<int32_t>(v);
}

void write_json(const Flags& flags, const json& report) {
  if (auto path = flags.opt("json")) {
    std::ofstream out(*path);
    if (!out) throw UsageError("--json " + *path + ": cannot write");
    out << report.dump(2) << "\n";
  }
}

// The workload flags shared by offline and serve, so both modes can run the same requests.
Workload workload_from_flags(const Flags& flags, int32_t vocab_size, const TokenizeFn& tokenize) {
  const int32_t num_prompts = count_flag(flags, "num-prompts", 64);
  const int32_t output_len = count_flag(flags, "output-len", 128);
  if (auto path = flags.opt("dataset")) {
    return load_dataset(*path, tokenize, output_len, static_cast<size_t>(num_prompts));
  }
  const double ratio = flags.f64("range-ratio", 0.0);
  if (ratio < 0 || ratio >= 1) throw UsageError("flag --range-ratio must be in [0, 1)");
  return random_workload(num_prompts, count_flag(flags, "input-len", 64), output_len, vocab_size,
                         static_cast<uint64_t>(flags.i64("seed", 0)), ratio);
}

void print_workload(const Workload& w) {
  std::printf(
      "workload: %zu requests, %lld prompt tokens, %lld output tokens, greedy, "
      "ignore_eos\n",
      w.size(), static_cast<long long>(w.prompt_tokens()),
      static_cast<long long>(w.output_tokens()));
}

// "a,b,c" -> {"a", "b", "c"}; empty items are errors naming the flag.
std::vector<std::string> name_list(const Flags& flags, const std::string& flag) {
  std::vector<std::string> names;
  const std::string list = flags.str(flag, "");
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) throw UsageError("--" + flag + " " + list + ": an empty name");
    names.push_back(item);
  }
  if (flags.has(flag) && names.empty()) throw UsageError("--" + flag + " needs NAME,NAME,...");
  return names;
}

namespace {

constexpr const char* kUsage =
    "usage:\n"
    "  pagedserve bench offline [--model DIR] [--num-prompts 64] [--input-len 64]\n"
    "      [--output-len 128] [--range-ratio 0] [--dataset FILE.jsonl] [--seed 0]\n"
    "      [--json FILE] [--skip-single] [--no-probe] [engine flags]\n"
    "      (with --speculative ngram: the same modes again with speculation off, and ratios;\n"
    "      --spec-rounds N on/off pairs, median ratio)\n"
    "      [--lora-modules NAME=PATH ... --lora-mix NAME,NAME,... (adds a run with request i\n"
    "      on adapter i mod k, vs the base alone) [--max-lora-rank 64]]\n"
    "      [--scoring-mix (adds runs with one prompt-scoring request (max_tokens 0,\n"
    "      prompt_logprobs) always in flight beside the workload, and its control: one generated\n"
    "      token from the same prompts; the workload's output tok/s vs none)]\n"
    "  pagedserve bench serve [--url http://127.0.0.1:8000] [--num-prompts 64] [--input-len 64]\n"
    "      [--output-len 128] [--range-ratio 0] [--dataset FILE.jsonl] [--vocab-size 6400]\n"
    "      [--max-concurrency N | --concurrency 1,4,16,64] [--request-rate R]\n"
    "      [--arrival burst|fixed|poisson] [--max-duration 600] [--request-timeout 300]\n"
    "      [--served-model NAME | --lora-mix NAME,NAME,... (request i asks for model i mod k)]\n"
    "      [--api-key KEY] [--json FILE] [--plot FILE.png]\n"
    "      [--no-progress] [--allow-remote]\n"
    "  pagedserve bench prefix [--url ...] [--num-prompts 16] [--prefix-len 1024]\n"
    "      [--suffix-len 32] [--output-len 16] [--vocab-size 6400] [--json FILE]\n"
    "  pagedserve bench accuracy [--model DIR] [--num-prompts 64] [--input-len 64]\n"
    "      [--output-len 128] [--range-ratio 0] [--dataset FILE.jsonl] [--seed 0] [--json FILE]\n"
    "      [--dtype D] [--quantization int8] [--quantization-group N] [--kv-cache-dtype D]\n"
    "      [--kernel K] [--kernel-isa I]\n"
    "      (those flags' path against fp32 weights and cache on our packed kernel, fed the\n"
    "      reference's greedy tokens: max/mean |dlogit|, top-1 agreement, identical\n"
    "      continuations)\n";

json to_json(const ModeResult& r) {
  return {{"mode", r.mode},
          {"requests", r.requests},
          {"prompt_tokens", r.prompt_tokens},
          {"output_tokens", r.output_tokens},
          {"seconds", r.seconds},
          {"total_tok_s", r.total_tok_s()},
          {"output_tok_s", r.output_tok_s()},
          {"mean_ttft_ms", r.mean_ttft_s * 1e3},
          {"mean_tpot_ms", r.mean_tpot_s * 1e3},
          {"max_seqs_in_step", r.max_seqs_in_step},
          {"kernels", r.kernels},
          {"steps", r.steps},
          {"step_time_shares",
           {{"schedule", r.schedule_share},
            {"forward", r.forward_share},
            {"sample", r.sample_share},
            {"emit", r.emit_share}}}};
}

void print_mode(const ModeResult& r) {
  std::printf(
      "%-12s %5d req  %7lld out tok  %7.2f s  total %8.1f tok/s  output %8.1f tok/s  "
      "TTFT %7.1f ms  TPOT %6.2f ms  max %d seqs/step\n",
      r.mode.c_str(), r.requests, static_cast<long long>(r.output_tokens), r.seconds,
      r.total_tok_s(), r.output_tok_s(), r.mean_ttft_s * 1e3, r.mean_tpot_s * 1e3,
      r.max_seqs_in_step);
  std::printf("%-12s step time: schedule %.2f%%  forward %.2f%%  sample %.2f%%  emit %.2f%%\n", "",
              100 * r.schedule_share, 100 * r.forward_share, 100 * r.sample_share,
              100 * r.emit_share);
  std::fflush(stdout);
}

// Weight bytes the runner holds and reads per token, the checkpoint's size on disk, and this
// process's peak RSS so far (loading and packing included): the memory figures of issue #21.
void print_memory(const std::string& dir, const ModeResult& r, json* report) {
  double checkpoint = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".safetensors") checkpoint += double(e.file_size(ec));
  }
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  const double peak_rss = double(ru.ru_maxrss) * 1024.0;  // Linux reports KiB
  std::printf(
      "memory: weights %.1f MB held, %.1f MB read per decode token; checkpoint %.1f MB; peak RSS "
      "%.1f MB (%.2fx the checkpoint)\n",
      r.weight_bytes / 1e6, r.weight_bytes_per_token / 1e6, checkpoint / 1e6, peak_rss / 1e6,
      checkpoint > 0 ? peak_rss / checkpoint : 0.0);
  (*report)["memory"] = {{"weight_bytes", r.weight_bytes},
                         {"weight_bytes_per_token", r.weight_bytes_per_token},
                         {"checkpoint_bytes", checkpoint},
                         {"peak_rss_bytes", peak_rss}};
  // Sliding-window release (kvcache/kv_pools.h): blocks a running sequence held, averaged over
  // steps, in blocks of every layer, against every layer keeping its whole context.
  if (r.sliding_pool && r.kv_running_seqs > 0 && r.num_layers > 0) {
    const double per_layer = double(r.num_layers) * double(r.kv_running_seqs);
    const double held = double(r.kv_layer_blocks_held) / per_layer;
    const double all_global = double(r.kv_layer_blocks_unsplit) / per_layer;
    const double ratio = all_global > 0 ? held / all_global : 0.0;
    std::printf(
        "kv cache: a running sequence held %.1f blocks (of all %d layers) on average, against "
        "%.1f with every layer global: %.3fx\n",
        held, r.num_layers, all_global, ratio);
    (*report)["kv_blocks_per_sequence"] = {
        {"held", held}, {"all_global", all_global}, {"ratio", ratio}};
  }
}

// --scoring-mix (issue #36): the workload with a prompt-scoring side stream, with its control
// (the same prompts, one generated token, no prompt logprobs) and without; the three alternated
// twice, best of each, as the LoRA mix is.
json compare_scoring_mix(const LoadedModel& model, std::shared_ptr<const Tokenizer> tokenizer,
                         const EngineConfig& config, const Workload& w) {
  // One sequence slot more than the workload's, so the side request runs beside all of it
  // instead of waiting for a workload request to end.
  EngineConfig wide = config;
  wide.max_num_seqs += 1;
  const int32_t concurrency = config.max_num_seqs;
  const OfflineSideStream score{true}, control{false};
  ModeResult best[3];
  const char* names[3] = {"continuous", "scoring", "prefill-1"};
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < 3; ++k) {
      const OfflineSideStream* side = k == 0 ? nullptr : k == 1 ? &score : &control;
      ModeResult m =
          run_offline_mode(names[k], model, tokenizer, wide, w, concurrency, nullptr, side);
      print_mode(m);
      if (round == 0 || m.output_tok_s() > best[k].output_tok_s()) best[k] = m;
    }
  }
  const ModeResult &best_base = best[0], &best_score = best[1], &best_control = best[2];
  const double vs_none = best_score.output_tok_s() / best_base.output_tok_s();
  const double vs_control = best_score.output_tok_s() / best_control.output_tok_s();
  // The workload's extra run time per side request: what one scored prompt costs the others,
  // and what the same prefill without prompt logprobs costs them (side streams of different
  // lengths compare per request).
  auto per_request = [&](const ModeResult& m) {
    return m.side_requests > 0
               ? (best_base.output_tok_s() / m.output_tok_s() - 1) / double(m.side_requests)
               : 0.0;
  };
  const double score_cost = per_request(best_score), control_cost = per_request(best_control);
  std::printf(
      "scoring side stream: %lld requests (%lld prompt tokens) scored beside the workload; "
      "control: %lld one-token requests\n"
      "workload output throughput with it / without: %.3fx; with it / with the control: %.3fx "
      "(best of 2 each, alternated)\n"
      "per side request the workload ran %.3f%% longer with a scored prompt, %.3f%% with the "
      "control's prefill: prompt logprobs cost %.2fx a plain prefill\n",
      static_cast<long long>(best_score.side_requests),
      static_cast<long long>(best_score.side_prompt_tokens),
      static_cast<long long>(best_control.side_requests), vs_none, vs_control, 100 * score_cost,
      100 * control_cost, control_cost > 0 ? score_cost / control_cost : 0.0);
  json out = to_json(best_score);
  out["side_requests"] = best_score.side_requests;
  out["side_prompt_tokens"] = best_score.side_prompt_tokens;
  out["control"] = to_json(best_control);
  out["control"]["side_requests"] = best_control.side_requests;
  out["ratio_output_tok_s_vs_none"] = vs_none;
  out["ratio_output_tok_s_vs_control"] = vs_control;
  out["workload_slowdown_per_scored_request"] = score_cost;
  out["workload_slowdown_per_control_request"] = control_cost;
  return out;
}

int bench_offline(int argc, char** argv) {
  std::set<std::string> valued = {"model",       "num-prompts", "input-len",    "output-len",
                                  "range-ratio", "dataset",     "seed",         "json",
                                  "spec-rounds", "lora-mix",    "max-lora-rank"};
  std::set<std::string> switches = {"skip-single", "no-probe", "scoring-mix"};
  const std::vector<LoraModuleFlag> lora_modules = take_lora_modules(argc, argv, 3);
  Flags flags = engine_command_flags(argc, argv, 3, valued, switches);
  const std::string dir = model_dir_from_flags(flags);
  EngineConfig config = engine_config_from_flags(flags);
  const std::vector<std::string> lora_mix = name_list(flags, "lora-mix");
  if (lora_mix.empty() != lora_modules.empty()) {
    throw UsageError("--lora-mix and --lora-modules go together (the mix names the modules)");
  }
  config.max_loras = static_cast<int32_t>(lora_modules.size());
  const int32_t max_lora_rank = max_lora_rank_from_flags(flags);

  auto tokenizer = std::make_shared<const Tokenizer>(Tokenizer::from_file(dir + "/tokenizer.json"));
  LoadedModel model = load_model(dir, load_options_from_flags(flags));
  const Workload w = workload_from_flags(
      flags, model.config.vocab_size, [&](const std::string& s) { return tokenizer->encode(s); });
  print_workload(w);

  json report = {{"model", dir},
                 {"requests", w.size()},
                 {"prompt_tokens", w.prompt_tokens()},
                 {"expected_output_tokens", w.output_tokens()},
                 {"max_num_seqs", config.max_num_seqs}};
  ModeResult cont =
      run_offline_mode("continuous", model, tokenizer, config, w, config.max_num_seqs);
  std::printf("kernels: %s\n", cont.kernels.c_str());
  print_memory(dir, cont, &report);
  print_mode(cont);
  report["continuous"] = to_json(cont);
  std::optional<ModeResult> single_run;
  if (!lora_mix.empty()) {
    // Base and mix alternate, twice each, and the best of each counts: on a shared machine a
    // single pair mostly measures whoever else was running (and the first run's page faults).
    const OfflineLoraMix mix{
        [&](Engine& e) { load_lora_modules(e, lora_modules, max_lora_rank, ""); }, lora_mix};
    ModeResult best_base = cont, best_mix;
    json rounds = json::array();
    for (int round = 0; round < 2; ++round) {
      ModeResult mixed =
          run_offline_mode("lora-mix", model, tokenizer, config, w, config.max_num_seqs, &mix);
      print_mode(mixed);
      rounds.push_back(to_json(mixed));
      if (mixed.output_tok_s() > best_mix.output_tok_s() || round == 0) best_mix = mixed;
      if (round == 1) break;
      ModeResult again =
          run_offline_mode("continuous", model, tokenizer, config, w, config.max_num_seqs);
      print_mode(again);
      rounds.push_back(to_json(again));
      if (again.output_tok_s() > best_base.output_tok_s()) best_base = again;
    }
    report["lora_mix"] = to_json(best_mix);
    report["lora_mix"]["adapters"] = lora_mix;
    report["lora_mix_rounds"] = rounds;
    const double ratio = best_mix.output_tok_s() / best_base.output_tok_s();
    std::printf(
        "lora-mix (%zu adapters, round-robin) / base output throughput: %.2fx (best of 2 "
        "each, alternated)\n",
        lora_mix.size(), ratio);
    report["ratio_lora_mix_vs_base_output_tok_s"] = ratio;
  }
  if (flags.on("scoring-mix"))
    report["scoring_mix"] = compare_scoring_mix(model, tokenizer, config, w);
  if (!flags.on("skip-single")) {
    ModeResult single = run_offline_mode("single", model, tokenizer, config, w, 1);
    single_run = single;
    print_mode(single);
    report["single"] = to_json(single);
    const double ratio = cont.output_tok_s() / single.output_tok_s();
    std::printf("continuous / single output throughput: %.2fx\n", ratio);
    report["ratio_output_tok_s"] = ratio;
  }
  if (!flags.on("no-probe")) {
    // The bytes one decode step reads at the dtype in use (fp32 figures when not reported).
    const double bytes = cont.weight_bytes_per_token > 0
                             ? static_cast<double>(cont.weight_bytes_per_token)
                             : static_cast<double>(weight_bytes(model.config));
    report["machine"] = print_floors(model.config, cont, single_run ? &*single_run : nullptr, bytes,
                                     config.runner.compute_dtype);
  }
  if (config.speculative.enabled()) {
    report["speculative"] =
        compare_speculative(model, tokenizer, config, w, cont, single_run ? &*single_run : nullptr,
                            count_flag(flags, "spec-rounds", 1));
  }
  write_json(flags, report);
  return 0;
}

}  // namespace

}  // namespace ps::bench_cli

namespace ps {

int bench_command(int argc, char** argv) {
  const std::string mode = argc >= 3 ? argv[2] : "";
  if (mode == "offline") return bench_cli::bench_offline(argc, argv);
  if (mode == "serve") return bench_cli::bench_serve(argc, argv);
  if (mode == "prefix") return bench_cli::bench_prefix(argc, argv);
  if (mode == "accuracy") return bench_cli::bench_accuracy(argc, argv);
  throw UsageError(bench_cli::kUsage);
}

}  // namespace ps
