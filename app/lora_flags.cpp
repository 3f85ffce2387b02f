#include "app/lora_flags.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "convert/lora_loader.h"
#include "engine/lora_registry.h"

namespace ps {

std::vector<LoraModuleFlag> take_lora_modules(int& argc, char** argv, int first) {
  std::vector<LoraModuleFlag> modules;
  std::set<std::string> names;
  auto add = [&](const std::string& value) {
    const size_t eq = value.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == value.size()) {
      throw UsageError("--lora-modules takes NAME=PATH values, got '" + value + "'");
    }
    LoraModuleFlag m{value.substr(0, eq), value.substr(eq + 1)};
    if (!names.insert(m.name).second) {
      throw UsageError("--lora-modules names '" + m.name + "' twice");
    }
    modules.push_back(std::move(m));
  };
  int out = first;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--lora-modules=", 0) == 0) {
      add(arg.substr(std::strlen("--lora-modules=")));
    } else if (arg == "--lora-modules") {
      const size_t before = modules.size();
      while (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) add(argv[++i]);
      if (modules.size() == before) throw UsageError("flag --lora-modules needs NAME=PATH values");
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  return modules;
}

int32_t max_lora_rank_from_flags(const Flags& flags) {
  const int64_t r = flags.i64("max-lora-rank", 64);
  if (r < 1 || r > 4096) {
    throw UsageError("flag --max-lora-rank must be between 1 and 4096, got " + std::to_string(r));
  }
  return static_cast<int32_t>(r);
}

int32_t max_loras_for(const Flags& flags, size_t num_modules) {
  const bool runtime = flags.on("enable-lora-runtime-updates");
  if (flags.has("max-loras")) {
    const int64_t n = flags.i64("max-loras", 0);
    if (n < 1 || n > 1024) {
      throw UsageError("flag --max-loras must be between 1 and 1024, got " + std::to_string(n));
    }
    if (size_t(n) < num_modules) {
      throw UsageError("--lora-modules names " + std::to_string(num_modules) +
                       " adapters but --max-loras is " + std::to_string(n));
    }
    return static_cast<int32_t>(n);
  }
  if (num_modules == 0 && !runtime) return 0;
  return static_cast<int32_t>(std::max<size_t>(num_modules, runtime ? 4 : 1));
}

void load_lora_modules(Engine& engine, const std::vector<LoraModuleFlag>& modules, int32_t max_rank,
                       const std::string& base_name) {
  for (const LoraModuleFlag& m : modules) {
    const std::string what = "--lora-modules " + m.name + "=" + m.path + ": ";
    if (m.name == base_name) {
      throw UsageError(what + "'" + m.name + "' is the base model's name (--served-model-name)");
    }
    std::shared_ptr<const LoraAdapter> adapter;
    try {
      adapter = load_lora_adapter(engine.model_config(), m.path, max_rank);
    } catch (const std::runtime_error& e) {
      throw UsageError(what + e.what());
    }
    if (auto error = engine.loras()->add(m.name, adapter)) throw UsageError(what + *error);
  }
}

}  // namespace ps
