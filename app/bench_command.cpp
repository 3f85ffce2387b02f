// `pagedserve bench offline`: continuous batching vs single-request mode on one seeded
// workload, with the machine's bandwidth and GEMM limits measured in the same run.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/engine_flags.h"
#include "bench/offline_bench.h"
#include "model/machine_probe.h"

namespace ps {
namespace {

using json = nlohmann::json;

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
          {"steps", r.steps}};
}

void print_mode(const ModeResult& r) {
  std::printf(
      "%-12s %5d req  %7lld out tok  %7.2f s  total %8.1f tok/s  output %8.1f tok/s  "
      "TTFT %7.1f ms  TPOT %6.2f ms  max %d seqs/step\n",
      r.mode.c_str(), r.requests, static_cast<long long>(r.output_tokens), r.seconds,
      r.total_tok_s(), r.output_tok_s(), r.mean_ttft_s * 1e3, r.mean_tpot_s * 1e3,
      r.max_seqs_in_step);
}

}  // namespace

int bench_command(int argc, char** argv) {
  if (argc < 3 || std::string(argv[2]) != "offline") {
    throw UsageError(
        "usage: pagedserve bench offline --model DIR [--num-prompts 64] "
        "[--input-len 64] [--output-len 128] [--max-num-seqs 64] [--seed 0] "
        "[--json FILE] [--skip-single] [--no-probe]");
  }
  std::set<std::string> valued = {"model",      "num-prompts", "input-len",
                                  "output-len", "seed",        "json"};
  valued.insert(engine_valued_flags().begin(), engine_valued_flags().end());
  std::set<std::string> switches = {"skip-single", "no-probe"};
  switches.insert(engine_switch_flags().begin(), engine_switch_flags().end());
  Flags flags(argc, argv, 3, valued, switches);
  const std::string dir = model_dir_from_flags(flags);
  auto positive = [&](const char* name, int64_t fallback) {
    int64_t v = flags.i64(name, fallback);
    if (v < 1 || v > 1000000) throw UsageError(std::string("flag --") + name + " must be >= 1");
    return static_cast<int32_t>(v);
  };
  const int32_t num_prompts = positive("num-prompts", 64);
  const int32_t input_len = positive("input-len", 64);
  const int32_t output_len = positive("output-len", 128);
  EngineConfig config = engine_config_from_flags(flags);

  auto tokenizer = std::make_shared<const Tokenizer>(Tokenizer::from_file(dir + "/tokenizer.json"));
  LoadedModel model = load_model(dir);
  OfflineWorkload w = random_workload(num_prompts, input_len, output_len, model.config.vocab_size,
                                      static_cast<uint64_t>(flags.i64("seed", 0)));
  std::printf("workload: %d prompts x %d input tokens, %d output tokens each, greedy, ignore_eos\n",
              num_prompts, input_len, output_len);

  json report = {{"model", dir},
                 {"num_prompts", num_prompts},
                 {"input_len", input_len},
                 {"output_len", output_len},
                 {"max_num_seqs", config.max_num_seqs}};
  ModeResult cont =
      run_offline_mode("continuous", model, tokenizer, config, w, config.max_num_seqs);
  print_mode(cont);
  report["continuous"] = to_json(cont);
  if (!flags.on("skip-single")) {
    ModeResult single = run_offline_mode("single", model, tokenizer, config, w, 1);
    print_mode(single);
    report["single"] = to_json(single);
    const double ratio = cont.output_tok_s() / single.output_tok_s();
    std::printf("continuous / single output throughput: %.2fx\n", ratio);
    report["ratio_output_tok_s"] = ratio;
    if (!flags.on("no-probe")) {
      MachineLimits m = probe_machine();
      const double bytes = static_cast<double>(weight_bytes(model.config));
      const double flops = static_cast<double>(matmul_flops_per_token(model.config));
      const double bw_floor_tok_s = m.read_bandwidth_gbs * 1e9 / bytes;
      const double compute_floor_tok_s = m.gemm_gflops * 1e9 / flops;
      std::printf("machine: read bandwidth %.1f GB/s, fp32 GEMM %.1f GFLOP/s\n",
                  m.read_bandwidth_gbs, m.gemm_gflops);
      std::printf("model: %.1f MB of fp32 weights, %.1f MFLOP per token (matmuls)\n", bytes / 1e6,
                  flops / 1e6);
      std::printf(
          "bandwidth floor (batch-1 decode): %.1f tok/s; single-request decode reaches "
          "%.0f%% of it (1/TPOT = %.1f tok/s)\n",
          bw_floor_tok_s, 100.0 / single.mean_tpot_s / bw_floor_tok_s, 1.0 / single.mean_tpot_s);
      std::printf(
          "compute floor (large batch): %.1f tok/s; continuous batching reaches %.0f%% of "
          "it in total tokens/s\n",
          compute_floor_tok_s, 100.0 * cont.total_tok_s() / compute_floor_tok_s);
      report["machine"] = {{"read_bandwidth_gbs", m.read_bandwidth_gbs},
                           {"gemm_gflops", m.gemm_gflops},
                           {"weight_bytes", bytes},
                           {"matmul_flops_per_token", flops},
                           {"bandwidth_floor_tok_s", bw_floor_tok_s},
                           {"compute_floor_tok_s", compute_floor_tok_s}};
    }
  }
  if (auto path = flags.opt("json")) {
    std::ofstream out(*path);
    if (!out) throw UsageError("--json " + *path + ": cannot write");
    out << report.dump(2) << "\n";
  }
  return 0;
}

}  // namespace ps
