#pragma once
// Engine flags shared by serve, generate and bench, so they mean the same everywhere.
#include <set>
#include <string>

#include "app/flags.h"
#include "checkpoint/loader.h"
#include "engine/engine.h"

namespace ps {

// A command's flags plus the engine's: --block-size --num-blocks --kv-cache-memory
// --max-num-seqs --max-batched-tokens --max-model-len --max-queued-requests --lora --revision
// --kernel auto|packed|blas --kernel-isa auto|avx512|avx2|generic --dtype --quantization
// --quantization-group --kv-cache-dtype --compute-dtype (model_dtype.h), --device auto|cpu|cuda
// --gpu-memory-utilization (executor/device_select.h), --speculative ngram and its tuning
// flags (app/speculative_flags.h), and the switches --no-prefix-caching, --enforce-eager
// and --disable-hybrid-kv-cache-manager.
Flags engine_command_flags(int argc, char** argv, int first, std::set<std::string> valued,
                           std::set<std::string> switches);
EngineConfig engine_config_from_flags(const Flags& flags);

// Where the model is: --model DIR; or --model ORG/NAME (a Hub id that is not a directory) found
// in the local Hugging Face cache at --revision (default main), never downloading; else the
// default tiny model (PAGEDSERVE_DEFAULT_MODEL or models/tiny next to the binary's source tree)
// when it exists. Throws UsageError otherwise; for a Hub id it lists every place it looked.
struct ModelLocation {
  std::string dir;
  std::string typed;      // --model as the user wrote it ("" for the default model)
  bool from_hub = false;  // resolved through the Hub cache
};
ModelLocation model_location_from_flags(const Flags& flags);
std::string model_dir_from_flags(const Flags& flags);  // model_location_from_flags(flags).dir

// load_model(dir), then, when --lora ADAPTER is given, the adapter merged in (convert/lora_merge.h)
// so an adapter can be tried without writing a new checkpoint. Says on stderr what it merged.
LoadedModel load_model_with_lora(const Flags& flags, const std::string& dir);

// --dtype auto|float32|bfloat16|float16 for load_model. A LoRA merge computes on fp32 weights,
// so with --lora, auto means float32 and another explicit dtype is a UsageError.
LoadOptions load_options_from_flags(const Flags& flags);

}  // namespace ps
