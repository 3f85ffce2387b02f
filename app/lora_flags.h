#pragma once
// The multi-LoRA flags of serve (issue #22), as vLLM spells them: --lora-modules NAME=PATH
// [NAME=PATH ...] (several values after one flag), --max-loras N (adapters resident at once),
// --max-lora-rank R, --enable-lora-runtime-updates.
#include <cstdint>
#include <string>
#include <vector>

#include "app/flags.h"
#include "engine/engine.h"

namespace ps {

struct LoraModuleFlag {
  std::string name;
  std::string path;
};

// Takes every --lora-modules and the NAME=PATH values after it out of argv[first, argc) (Flags
// keeps one value per flag), compacting argv and lowering argc. Throws UsageError on a value
// that is not NAME=PATH, a repeated name, or a flag given no values.
std::vector<LoraModuleFlag> take_lora_modules(int& argc, char** argv, int first);

// --max-lora-rank (default 64), checked.
int32_t max_lora_rank_from_flags(const Flags& flags);

// --max-loras when given (the adapters must fit it), else enough for the modules, and 4 when
// runtime updates are on; 0 when no LoRA flag is given.
int32_t max_loras_for(const Flags& flags, size_t num_modules);

// Reads every module for `engine`'s base and loads it under its name. Throws UsageError naming
// the module, its path, and what is wrong (the adapter file and tensor, for a bad adapter).
void load_lora_modules(Engine& engine, const std::vector<LoraModuleFlag>& modules, int32_t max_rank,
                       const std::string& base_name);

}  // namespace ps
