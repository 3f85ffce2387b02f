#pragma once
// Engine flags shared by serve, generate and bench, so they mean the same everywhere.
#include <set>
#include <string>

#include "app/flags.h"
#include "engine/engine.h"

namespace ps {

// --block-size --num-blocks --kv-cache-memory --max-num-seqs --max-batched-tokens
// --max-model-len --max-queued-requests and the switch --no-prefix-caching.
const std::set<std::string>& engine_valued_flags();
const std::set<std::string>& engine_switch_flags();
EngineConfig engine_config_from_flags(const Flags& flags);

// The model directory: --model, else the default tiny model (PAGEDSERVE_DEFAULT_MODEL or
// models/tiny next to the binary's source tree) when it exists. Throws UsageError otherwise.
std::string model_dir_from_flags(const Flags& flags);

}  // namespace ps
