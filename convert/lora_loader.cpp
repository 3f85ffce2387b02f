#include "convert/lora_loader.h"

#include "convert/lora_reader.h"
#include "cpu/lora_factors.h"

namespace ps {

std::shared_ptr<const LoraAdapter> load_lora_adapter(const ModelConfig& base,
                                                     const std::string& adapter, int32_t max_rank) {
  const LoraFile file = read_lora_adapter(base, adapter, max_rank);
  LoraAdapterInfo info;
  info.source = file.report.source;
  info.rank = file.report.rank;
  info.alpha = file.report.alpha;
  info.scale = file.report.scale;
  info.modules = file.report.modules;
  return pack_lora_adapter(base, file.modules, file.scale, std::move(info));
}

}  // namespace ps
