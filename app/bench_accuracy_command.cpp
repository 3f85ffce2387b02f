// `pagedserve bench accuracy`: the engine flags' precision (--dtype, --quantization,
// --quantization-group, --kv-cache-dtype, --kernel) against the fp32 reference on the same
// checkpoint and prompts (bench/accuracy_bench.h says how they are compared).
#include <cstdio>
#include <memory>

#include "app/bench_command_internal.h"
#include "app/commands.h"
#include "app/engine_flags.h"
#include "bench/accuracy_bench.h"
#include "checkpoint/loader.h"
#include "cpu/model_runner.h"
#include "tokenizer/tokenizer.h"

namespace ps::bench_cli {
namespace {

// What the candidate computes with, in the words of its flags.
std::string candidate_name(const Flags& flags, const RunnerOptions& o) {
  std::string s = "--dtype " + flags.str("dtype", "auto");
  if (o.quantization == WeightQuantization::int8) {
    s += ", --quantization int8 (" +
         (o.quantization_group > 0 ? "groups of " + std::to_string(o.quantization_group)
                                   : std::string("per channel")) +
         ")";
  }
  s += ", --kv-cache-dtype " + flags.str("kv-cache-dtype", "auto");
  if (o.compute_dtype != ComputeDtype::f32) {
    s += std::string(", --compute-dtype ") + compute_dtype_name(o.compute_dtype);
  }
  return s;
}

}  // namespace

int bench_accuracy(int argc, char** argv) {
  std::set<std::string> valued = {"model",   "num-prompts", "input-len", "output-len",
                                  "dataset", "range-ratio", "seed",      "json"};
  Flags flags = engine_command_flags(argc, argv, 3, valued, {});
  if (flags.has("lora")) {
    throw UsageError("bench accuracy compares precisions of one checkpoint; --lora is not taken");
  }
  if (flags.str("device", "cpu") == "cuda") {
    throw UsageError("bench accuracy runs the CPU executor; --device cuda is not taken");
  }
  const std::string dir = model_dir_from_flags(flags);
  const EngineConfig config = engine_config_from_flags(flags);
  const LoadedModel reference_model = load_model(dir);  // fp32 matrices
  const LoadedModel candidate_model = load_model(dir, load_options_from_flags(flags));
  std::unique_ptr<Tokenizer> tokenizer;
  if (flags.has("dataset")) {
    tokenizer = std::make_unique<Tokenizer>(Tokenizer::from_file(dir + "/tokenizer.json"));
  }
  const Workload w =
      workload_from_flags(flags, reference_model.config.vocab_size,
                          [&](const std::string& s) { return tokenizer->encode(s); });
  print_workload(w);

  const int32_t block_size = config.block_size;
  const KvCacheSpec spec = accuracy_cache_spec(reference_model.config, w, block_size);
  // The reference: fp32 weights, an fp32 cache, our packed kernel (its rounding does not move
  // with the batch, so the reference is the same at any workload size).
  RunnerOptions reference_options;
  reference_options.linear_mode = LinearMode::packed;
  ModelRunner reference(reference_model.weights, spec, reference_options);
  ModelRunner candidate(candidate_model.weights, spec, config.runner);
  const std::string name = candidate_name(flags, config.runner);
  std::printf("reference: --dtype float32, --kv-cache-dtype float32, --kernel packed\n");
  std::printf("candidate: %s\n  kernels: %s\n", name.c_str(), candidate.kernel_summary().c_str());
  std::printf("weights read per token: reference %.1f MB, candidate %.1f MB\n",
              reference.weight_bytes_per_token() / 1e6, candidate.weight_bytes_per_token() / 1e6);
  std::fflush(stdout);

  const AccuracyReport r = compare_greedy(reference, candidate, w, block_size);
  print_accuracy_report(r);
  json report = to_json(r);
  report["model"] = dir;
  report["candidate"] = name;
  report["kernels"] = candidate.kernel_summary();
  report["prompt_tokens"] = w.prompt_tokens();
  write_json(flags, report);
  return 0;
}

}  // namespace ps::bench_cli
