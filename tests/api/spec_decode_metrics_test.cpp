// The speculative decoding series of /metrics: vLLM's spec_decode counters and pagedserve's
// acceptance rate and tokens per drafting step, computed from the engine's counters.
#include <gtest/gtest.h>

#include <string>

#include "metrics/metrics_text.h"
#include "metrics/router_metrics.h"

namespace ps {
namespace {

EngineStats drafting() {
  EngineStats s;
  s.spec_decode_num_drafts = 10;
  s.spec_decode_num_draft_tokens = 40;
  s.spec_decode_num_accepted_tokens = 30;
  return s;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST(SpecDecodeMetrics, VllmCountersCarryTheEngineCounts) {
  RouterMetricsInfo info;
  info.model_name = "tiny";
  info.unix_time_s = 1;
  const std::string text = router_metrics_text(drafting(), info);
  EXPECT_TRUE(has_line(text, "# TYPE vllm:spec_decode_num_drafts_total counter"));
  EXPECT_TRUE(has_line(text, "vllm:spec_decode_num_drafts_total{model_name=\"tiny\"} 10"));
  EXPECT_TRUE(has_line(text, "vllm:spec_decode_num_draft_tokens_total{model_name=\"tiny\"} 40"));
  EXPECT_TRUE(has_line(text, "vllm:spec_decode_num_accepted_tokens_total{model_name=\"tiny\"} 30"))
      << text;
}

TEST(SpecDecodeMetrics, AcceptanceRateAndTokensPerDraftStep) {
  const std::string text = metrics_text(drafting(), HttpCounts{});
  EXPECT_TRUE(has_line(text, "pagedserve_spec_decode_acceptance_rate 0.75")) << text;
  EXPECT_TRUE(has_line(text, "pagedserve_spec_decode_tokens_per_draft_step 4"));  // 1 + 30 / 10
  // Before any draft both are 0, not NaN.
  const std::string idle = metrics_text(EngineStats{}, HttpCounts{});
  EXPECT_TRUE(has_line(idle, "pagedserve_spec_decode_acceptance_rate 0"));
  EXPECT_TRUE(has_line(idle, "pagedserve_spec_decode_tokens_per_draft_step 0"));
}

}  // namespace
}  // namespace ps
