#pragma once
// Engine flags shared by serve, generate and bench, so they mean the same everywhere.
#include <set>
#include <string>

#include "app/flags.h"
#include "engine/engine.h"
#include "model/loader.h"

namespace ps {

// A command's flags plus the engine's: --block-size --num-blocks --kv-cache-memory
// --max-num-seqs --max-batched-tokens --max-model-len --max-queued-requests --lora
// --kernel auto|packed|blas --kernel-isa auto|avx512|avx2|generic and the switch
// --no-prefix-caching.
Flags engine_command_flags(int argc, char** argv, int first, std::set<std::string> valued,
                           std::set<std::string> switches);
EngineConfig engine_config_from_flags(const Flags& flags);

// The model directory: --model, else the default tiny model (PAGEDSERVE_DEFAULT_MODEL or
// models/tiny next to the binary's source tree) when it exists. Throws UsageError otherwise.
std::string model_dir_from_flags(const Flags& flags);

// load_model(dir), then, when --lora ADAPTER is given, the adapter merged in (convert/lora_merge.h)
// so an adapter can be tried without writing a new checkpoint. Says on stderr what it merged.
LoadedModel load_model_with_lora(const Flags& flags, const std::string& dir);

}  // namespace ps
