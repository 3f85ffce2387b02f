#pragma once
// The /metrics series that inference routers scrape from model servers, under the names they
// look for: the Gateway API Inference Extension's model-server protocol (used by llm-d's endpoint
// picker) and vLLM's production-stack router both read vLLM's names. The pagedserve_* series
// stay as they are; these are the same numbers under the routers' names (docs/metrics.md has
// the mapping).
#include <cstdint>
#include <string>

#include "engine/engine_stats.h"
#include "http/edge_server.h"

namespace ps {

struct RouterMetricsInfo {
  std::string model_name;  // the served name: vLLM labels every series with model_name
  int32_t block_size = 16;
  EdgeCounts edge;          // requests whose head has arrived but that wait for a thread
  int64_t unix_time_s = 0;  // the LoRA info gauge's value (0: now)
};

std::string router_metrics_text(const EngineStats& stats, const RouterMetricsInfo& info);

}  // namespace ps
