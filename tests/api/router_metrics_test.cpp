// The router-facing /metrics series: vLLM's names, types and meanings, valid exposition text.
#include "metrics/router_metrics.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <vector>

namespace ps {
namespace {

EngineStats sample() {
  EngineStats s;
  s.running = 3;
  s.waiting = 2;
  s.kv_blocks_total = 200;
  s.kv_blocks_active = 50;
  s.kv_blocks_cached = 30;  // cached-but-free blocks are reusable: not "used"
  s.kv_blocks_free = 120;
  s.prefix_cache_queries = 400;
  s.prefix_cache_hits = 300;
  return s;
}

RouterMetricsInfo info() {
  RouterMetricsInfo i;
  i.model_name = "tiny \"q\"";
  i.block_size = 32;
  i.edge.queued = 4;
  i.edge.reading_head = 7;
  i.edge.idle = 9;
  i.edge.active = 5;
  i.edge.refused_total = 11;
  i.edge.header_timeouts_total = 13;
  i.edge.evicted_total = 17;
  i.unix_time_s = 1700000000;
  return i;
}

TEST(RouterMetrics, VllmNamesAndMeanings) {
  const std::string t = router_metrics_text(sample(), info());
  const std::string m = "{model_name=\"tiny \\\"q\\\"\"}";
  for (const std::string& want : std::vector<std::string>{
           "# TYPE vllm:num_requests_waiting gauge\n",
           // The engine's queue plus requests held by the HTTP side for a thread.
           "vllm:num_requests_waiting" + m + " 6\n",
           "# TYPE vllm:num_requests_running gauge\n",
           "vllm:num_requests_running" + m + " 3\n",
           "# TYPE vllm:kv_cache_usage_perc gauge\n",
           "vllm:kv_cache_usage_perc" + m + " 0.25\n",
           "vllm:gpu_cache_usage_perc" + m + " 0.25\n",
           "# TYPE vllm:prefix_cache_queries_total counter\n",
           "vllm:prefix_cache_queries_total" + m + " 400\n",
           "vllm:prefix_cache_hits_total" + m + " 300\n",
           "vllm:gpu_prefix_cache_hit_rate" + m + " 0.75\n",
           "vllm:cache_config_info{block_size=\"32\",num_gpu_blocks=\"200\"} 1\n",
           "vllm:lora_requests_info{max_lora=\"0\",running_lora_adapters=\"\","
           "waiting_lora_adapters=\"\"} 1700000000\n",
           "pagedserve_http_connections{state=\"reading_head\"} 7\n",
           "pagedserve_http_connections{state=\"idle\"} 9\n",
           "pagedserve_http_connections{state=\"queued\"} 4\n",
           "pagedserve_http_connections{state=\"active\"} 5\n",
           "pagedserve_http_connections_refused_total 11\n",
           "pagedserve_http_header_timeouts_total 13\n",
           "pagedserve_http_connections_evicted_total 17\n",
       }) {
    EXPECT_NE(t.find(want), std::string::npos) << "missing: " << want << "\nin:\n" << t;
  }
}

TEST(RouterMetrics, EveryLineIsValidExposition) {
  const std::string t = router_metrics_text(sample(), info());
  // Names may hold colons (vLLM's namespace); label values escape quotes.
  std::regex sample_line(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-z_]+="([^"\\]|\\.)*"(,[a-z_]+="([^"\\]|\\.)*")*\})? [-+0-9.eE]+$)");
  std::regex comment(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$)");
  std::istringstream in(t);
  std::string line;
  int samples = 0;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) {
      EXPECT_TRUE(std::regex_match(line, comment)) << line;
    } else {
      EXPECT_TRUE(std::regex_match(line, sample_line)) << line;
      ++samples;
    }
  }
  EXPECT_GE(samples, 15);
}

TEST(RouterMetrics, EmptyEngineIsZeroNotNan) {
  const std::string t = router_metrics_text(EngineStats{}, RouterMetricsInfo{});
  EXPECT_NE(t.find("vllm:kv_cache_usage_perc{model_name=\"\"} 0\n"), std::string::npos) << t;
  EXPECT_NE(t.find("vllm:gpu_prefix_cache_hit_rate{model_name=\"\"} 0\n"), std::string::npos);
  EXPECT_EQ(t.find("nan"), std::string::npos);
  // Without a given time the LoRA gauge carries the current one.
  EXPECT_EQ(t.find("waiting_lora_adapters=\"\"} 0\n"), std::string::npos);
}

}  // namespace
}  // namespace ps
