#include "metrics/router_metrics.h"

#include <chrono>
#include <cstdio>

namespace ps {
namespace {

// Prometheus label values escape backslash, quote and newline.
std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

void series(std::string& out, const char* name, const char* type, const char* help,
            const std::string& labels, double value) {
  out += std::string("# HELP ") + name + " " + help + "\n";
  out += std::string("# TYPE ") + name + " " + type + "\n";
  out += std::string(name) + "{" + labels + "} " + num(value) + "\n";
}

}  // namespace

std::string router_metrics_text(const EngineStats& s, const RouterMetricsInfo& info) {
  const std::string model = "model_name=\"" + label_value(info.model_name) + "\"";
  std::string out;
  // Waiting: the engine's queue plus requests the HTTP side holds for a free thread, so a router
  // sees every request this replica has accepted and not started.
  const double waiting = static_cast<double>(s.waiting) + static_cast<double>(info.edge.queued);
  series(out, "vllm:num_requests_waiting", "gauge",
         "Requests waiting to be processed (engine queue + HTTP requests waiting for a thread).",
         model, waiting);
  series(out, "vllm:num_requests_running", "gauge",
         "Requests in the running batch (prefilling or decoding).", model, s.running);
  const double usage =
      s.kv_blocks_total > 0 ? static_cast<double>(s.kv_blocks_active) / s.kv_blocks_total : 0.0;
  series(out, "vllm:kv_cache_usage_perc", "gauge",
         "KV-cache usage: fraction of blocks held by requests (1 = full).", model, usage);
  series(out, "vllm:gpu_cache_usage_perc", "gauge",
         "The same as vllm:kv_cache_usage_perc (its older name, still read by some routers).",
         model, usage);
  series(out, "vllm:prefix_cache_queries_total", "counter",
         "Prompt tokens looked up in the prefix cache.", model,
         static_cast<double>(s.prefix_cache_queries));
  series(out, "vllm:prefix_cache_hits_total", "counter", "Prompt tokens found in the prefix cache.",
         model, static_cast<double>(s.prefix_cache_hits));
  const double hit_rate =
      s.prefix_cache_queries > 0
          ? static_cast<double>(s.prefix_cache_hits) / static_cast<double>(s.prefix_cache_queries)
          : 0.0;
  series(out, "vllm:gpu_prefix_cache_hit_rate", "gauge",
         "Prefix-cache hit rate over the server's life (hits / queries, in tokens).", model,
         hit_rate);
  // Speculative decoding, as vLLM names it: acceptance rate = accepted / draft tokens; tokens
  // per drafting step = 1 + accepted / drafts.
  series(out, "vllm:spec_decode_num_drafts_total", "counter",
         "Sequence steps that carried speculative draft tokens.", model,
         static_cast<double>(s.spec_decode_num_drafts));
  series(out, "vllm:spec_decode_num_draft_tokens_total", "counter",
         "Speculative draft tokens verified.", model,
         static_cast<double>(s.spec_decode_num_draft_tokens));
  series(out, "vllm:spec_decode_num_accepted_tokens_total", "counter",
         "Speculative draft tokens accepted (equal to the token the model sampled).", model,
         static_cast<double>(s.spec_decode_num_accepted_tokens));
  series(out, "vllm:cache_config_info", "gauge",
         "KV-cache layout, in labels (read by prefix-cache-aware routers).",
         "block_size=\"" + std::to_string(info.block_size) + "\",num_gpu_blocks=\"" +
             std::to_string(s.kv_blocks_total) + "\"",
         1);
  // No dynamic LoRA adapters (a LoRA is merged at load): max_lora 0 and empty lists tell a
  // LoRA-affinity scorer that no adapter is loaded here. The value is a timestamp by protocol.
  int64_t now = info.unix_time_s;
  if (now == 0) {
    now = std::chrono::duration_cast<std::chrono::seconds>(
              std::chrono::system_clock::now().time_since_epoch())
              .count();
  }
  series(out, "vllm:lora_requests_info", "gauge",
         "LoRA adapters running and waiting (labels); the value is when this was observed.",
         "max_lora=\"0\",running_lora_adapters=\"\",waiting_lora_adapters=\"\"",
         static_cast<double>(now));
  // The edge's own state, under pagedserve's prefix.
  out += "# HELP pagedserve_http_connections Open HTTP connections by state.\n";
  out += "# TYPE pagedserve_http_connections gauge\n";
  for (auto [state, n] :
       {std::pair{"reading_head", info.edge.reading_head}, std::pair{"idle", info.edge.idle},
        std::pair{"queued", info.edge.queued}, std::pair{"active", info.edge.active}}) {
    out += std::string("pagedserve_http_connections{state=\"") + state + "\"} " +
           std::to_string(n) + "\n";
  }
  out += "# HELP pagedserve_http_connections_refused_total Connections refused over a cap.\n";
  out += "# TYPE pagedserve_http_connections_refused_total counter\n";
  out +=
      "pagedserve_http_connections_refused_total " + std::to_string(info.edge.refused_total) + "\n";
  out +=
      "# HELP pagedserve_http_connections_evicted_total Waiting connections closed at the "
      "connection cap to admit a new one.\n";
  out += "# TYPE pagedserve_http_connections_evicted_total counter\n";
  out +=
      "pagedserve_http_connections_evicted_total " + std::to_string(info.edge.evicted_total) + "\n";
  out +=
      "# HELP pagedserve_http_header_timeouts_total Connections closed because no complete "
      "request head arrived in time.\n";
  out += "# TYPE pagedserve_http_header_timeouts_total counter\n";
  out += "pagedserve_http_header_timeouts_total " +
         std::to_string(info.edge.header_timeouts_total) + "\n";
  return out;
}

}  // namespace ps
