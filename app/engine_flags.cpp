#include "app/engine_flags.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "app/speculative_flags.h"
#include "checkpoint/hub_cache.h"
#include "convert/lora_merge.h"
#include "cpu/packed_layer.h"
#include "kernels/kernel_isa.h"

namespace ps {

Flags engine_command_flags(int argc, char** argv, int first, std::set<std::string> valued,
                           std::set<std::string> switches) {
  valued.insert({"block-size",
                 "num-blocks",
                 "kv-cache-memory",
                 "max-num-seqs",
                 "max-batched-tokens",
                 "max-model-len",
                 "max-queued-requests",
                 "lora",
                 "revision",
                 "kernel",
                 "kernel-isa",
                 "dtype",
                 "quantization",
                 "quantization-group",
                 "kv-cache-dtype",
                 "compute-dtype",
                 "device",
                 "gpu-memory-utilization",
                 "scheduling-policy",
                 "state-snapshot-interval",
                 "max-state-snapshots"});
  valued.merge(speculative_flag_names());
  switches.insert({"no-prefix-caching", "enforce-eager", "disable-hybrid-kv-cache-manager"});
  return Flags(argc, argv, first, std::move(valued), std::move(switches));
}

namespace {

int32_t positive_int(const Flags& flags, const std::string& name, int64_t fallback) {
  int64_t v = flags.i64(name, fallback);
  if (v < 1 || v > (1ll << 30)) {
    throw UsageError("flag --" + name + " must be between 1 and 2^30, got " + std::to_string(v));
  }
  return static_cast<int32_t>(v);
}

// "512M", "2G", "1048576": bytes.
int64_t parse_bytes(const std::string& name, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  double mult = 1;
  std::string suffix = end ? std::string(end) : "";
  if (suffix == "K" || suffix == "KiB" || suffix == "k")
    mult = 1024.0;
  else if (suffix == "M" || suffix == "MiB")
    mult = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GiB")
    mult = 1024.0 * 1024 * 1024;
  else if (!suffix.empty())
    throw UsageError("flag --" + name + ": cannot read '" + text + "' as bytes (e.g. 512M, 2G)");
  if (end == text.c_str() || !(v > 0)) {
    throw UsageError("flag --" + name + " must be a positive size (e.g. 512M), got '" + text + "'");
  }
  return static_cast<int64_t>(v * mult);
}

// --device auto|cpu|cuda (auto by default: the GPU when there is one), --gpu-memory-utilization
// and --enforce-eager (no CUDA graphs); an explicit --kv-cache-memory sizes the GPU's cache too.
DeviceOptions device_options_from_flags(const Flags& flags, int64_t kv_cache_memory) {
  DeviceOptions d;
  try {
    d.device = parse_device(flags.str("device", "auto"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("flag --device: ") + e.what());
  }
  if (auto u = flags.opt("gpu-memory-utilization")) {
    char* end = nullptr;
    d.gpu_memory_utilization = std::strtod(u->c_str(), &end);
    if (end == u->c_str() || *end != '\0' || !(d.gpu_memory_utilization > 0.0) ||
        d.gpu_memory_utilization > 1.0) {
      throw UsageError("flag --gpu-memory-utilization must be a fraction in (0, 1], got '" + *u +
                       "'");
    }
    if (flags.has("kv-cache-memory")) {
      throw UsageError(
          "flags --gpu-memory-utilization and --kv-cache-memory both size the KV cache; give one");
    }
    if (d.device == Device::cpu) {
      throw UsageError("flag --gpu-memory-utilization applies to --device cuda, not cpu");
    }
  }
  if (flags.has("kv-cache-memory")) d.kv_cache_memory = kv_cache_memory;
  d.cuda_graphs = !flags.on("enforce-eager");
  if (d.device == Device::cuda) {
    // Before anything loads: a machine without a GPU (or a build without CUDA) says so at once.
    try {
      (void)resolve_device(Device::cuda, probe_cuda(), "");
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
  }
  return d;
}

}  // namespace

EngineConfig engine_config_from_flags(const Flags& flags) {
  EngineConfig c;
  c.block_size = positive_int(flags, "block-size", c.block_size);
  if (flags.has("num-blocks")) c.num_blocks = positive_int(flags, "num-blocks", 1);
  if (auto mem = flags.opt("kv-cache-memory"))
    c.kv_cache_memory = parse_bytes("kv-cache-memory", *mem);
  c.max_num_seqs = positive_int(flags, "max-num-seqs", c.max_num_seqs);
  c.max_batched_tokens = positive_int(flags, "max-batched-tokens", c.max_batched_tokens);
  if (flags.has("max-model-len")) c.max_model_len = positive_int(flags, "max-model-len", 1);
  c.max_queued_requests =
      static_cast<int32_t>(flags.i64("max-queued-requests", c.max_queued_requests));
  if (c.max_queued_requests < 0) throw UsageError("flag --max-queued-requests must be >= 0");
  c.enable_prefix_caching = !flags.on("no-prefix-caching");
  // vLLM's name: one KV pool for every layer, sliding-window blocks never given back.
  c.hybrid_kv_cache = !flags.on("disable-hybrid-kv-cache-manager");
  const int64_t interval = flags.i64("state-snapshot-interval", c.state_snapshot_interval);
  if (interval < 0 || interval > (1 << 20)) {
    throw UsageError("flag --state-snapshot-interval must be in [0, 2^20], got " +
                     std::to_string(interval));
  }
  c.state_snapshot_interval = static_cast<int32_t>(interval);
  if (c.state_snapshot_interval % c.block_size != 0) {
    throw UsageError("flag --state-snapshot-interval must be a multiple of --block-size (" +
                     std::to_string(c.block_size) + "), got " +
                     std::to_string(c.state_snapshot_interval));
  }
  if (flags.has("max-state-snapshots")) {
    const int64_t n = flags.i64("max-state-snapshots", 0);
    if (n < 0 || n > (1 << 16)) {
      throw UsageError("flag --max-state-snapshots must be in [0, 65536], got " +
                       std::to_string(n));
    }
    c.max_state_snapshots = static_cast<int32_t>(n);
  }
  const std::string policy = flags.str("scheduling-policy", "fcfs");
  if (policy == "priority") {
    c.scheduling_policy = SchedulingPolicy::kPriority;
  } else if (policy != "fcfs") {
    throw UsageError("flag --scheduling-policy must be fcfs or priority, got '" + policy + "'");
  }
  c.speculative = speculative_config_from_flags(flags);
  try {
    // PAGEDSERVE_KERNEL sets the default, so a test suite can pin every process it starts.
    const char* env = std::getenv("PAGEDSERVE_KERNEL");
    c.runner.linear_mode =
        parse_linear_mode(flags.str("kernel", env != nullptr && *env != '\0' ? env : "auto"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("flag --kernel: ") + e.what());
  }
  (void)load_options_from_flags(flags);  // --dtype is checked here, before anything loads
  try {
    c.runner.quantization = parse_quantization(flags.str("quantization", "none"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("flag --quantization: ") + e.what());
  }
  c.runner.quantization_group = flags.i64("quantization-group", 0);
  if (c.runner.quantization_group < 0 || c.runner.quantization_group > (1 << 20)) {
    throw UsageError(
        "flag --quantization-group must be 0 (per output channel) or a positive "
        "number of input columns per scale, got " +
        std::to_string(c.runner.quantization_group));
  }
  if (c.runner.quantization == WeightQuantization::int8 &&
      c.runner.linear_mode == LinearMode::blas) {
    throw UsageError(
        "flag --quantization int8 runs on the packed kernel; it cannot be combined "
        "with --kernel blas");
  }
  if (flags.has("quantization-group") && c.runner.quantization != WeightQuantization::int8) {
    throw UsageError("flag --quantization-group needs --quantization int8");
  }
  try {
    c.runner.kv_cache_dtype = parse_kv_cache_dtype(flags.str("kv-cache-dtype", "auto"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("flag --kv-cache-dtype: ") + e.what());
  }
  c.device = device_options_from_flags(flags, c.kv_cache_memory);
  // The ISA is a process-wide choice (every kernel dispatches on it), forced here before the
  // engine packs and tunes its weights.
  if (const std::string isa = flags.str("kernel-isa", "auto"); isa != "auto") {
    try {
      force_kernel_isa(parse_kernel_isa(isa));
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("flag --kernel-isa: ") + e.what());
    }
  }
  // After the ISA: bfloat16 compute needs the avx512 one (cpu/packed_layer.h). The CUDA
  // executor computes in bf16 whatever this says.
  try {
    c.runner.compute_dtype = parse_compute_dtype(flags.str("compute-dtype", "float32"));
    if (c.device.device != Device::cuda) check_compute_dtype(c.runner);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("flag --compute-dtype: ") + e.what());
  }
  return c;
}

ModelLocation model_location_from_flags(const Flags& flags) {
  if (auto dir = flags.opt("model")) {
    if (std::filesystem::is_directory(*dir)) {
      if (flags.has("revision")) {
        throw UsageError("--revision applies to a Hub model id, but --model " + *dir +
                         " is a directory");
      }
      return {*dir, *dir, false};
    }
    if (!looks_like_hub_id(*dir)) {
      throw UsageError("--model " + *dir + ": no such directory");
    }
    HubLookup found =
        find_in_hub_cache(*dir, flags.str("revision", "main"), hub_cache_roots(hub_environment()));
    if (found.snapshot) return {*found.snapshot, *dir, true};
    std::string message = "--model " + *dir +
                          ": no such directory, and not in the local Hugging Face cache "
                          "(pagedserve never downloads). Looked in:";
    for (const auto& place : found.looked) message += "\n  " + place;
    message += "\nDownload it first (e.g. `huggingface-cli download " + *dir +
               "`), set HF_HUB_CACHE or HF_HOME to the cache that has it, or pass a directory.";
    throw UsageError(message);
  }
  if (flags.has("revision")) throw UsageError("--revision needs --model ORG/NAME");
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("PAGEDSERVE_DEFAULT_MODEL")) candidates.push_back(env);
  candidates.push_back(std::string(PAGEDSERVE_SOURCE_DIR) + "/models/tiny");
  candidates.push_back(std::string(PAGEDSERVE_SOURCE_DIR) + "/models/tiny-random");
  for (const auto& c : candidates) {
    if (std::filesystem::exists(c + "/config.json")) return {c, "", false};
  }
  throw UsageError(
      "no --model given and no default model found (looked in models/tiny and "
      "models/tiny-random); run `pagedserve make-tiny-model models/tiny-random` or pass --model "
      "DIR");
}

std::string model_dir_from_flags(const Flags& flags) {
  return model_location_from_flags(flags).dir;
}

LoadOptions load_options_from_flags(const Flags& flags) {
  LoadOptions o;
  try {
    o.dtype = parse_model_dtype(flags.str("dtype", "auto"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("flag --dtype: ") + e.what());
  }
  if (flags.has("lora")) {
    if (o.dtype != ModelDtype::auto_dtype && o.dtype != ModelDtype::f32) {
      throw UsageError("flag --dtype " + flags.str("dtype", "") +
                       " cannot be combined with --lora (the merge needs float32 weights)");
    }
    o.dtype = ModelDtype::f32;
  }
  return o;
}

LoadedModel load_model_with_lora(const Flags& flags, const std::string& dir) {
  LoadedModel model = load_model(dir, load_options_from_flags(flags));
  if (auto adapter = flags.opt("lora")) {
    LoraReport r;
    model = merge_lora(model, *adapter, &r);
    std::fprintf(stderr, "merged LoRA %s (rank %d, scale %g) into %zu modules\n", r.source.c_str(),
                 r.rank, r.scale, r.modules.size());
  }
  return model;
}

}  // namespace ps
