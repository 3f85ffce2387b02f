// /metrics must be valid Prometheus text and carry the numbers the issue lists.
#include "metrics/metrics_text.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

namespace ps {
namespace {

HttpCounts counts() {
  HttpCounts c{};
  c[200 - 100] = 7;
  c[429 - 100] = 2;
  return c;
}

EngineStats sample() {
  EngineStats s;
  s.running = 3;
  s.waiting = 2;
  s.kv_blocks_total = 100;
  s.kv_blocks_active = 25;
  s.kv_blocks_cached = 5;
  s.kv_blocks_free = 70;
  s.prefix_cache_queries = 64;
  s.prefix_cache_hits = 32;
  s.prompt_tokens_total = 1000;
  s.generation_tokens_total = 2000;
  s.preemptions_total = 1;
  s.max_seqs_in_step = 17;
  s.time_to_first_token = {{0.01, 0.1, 1.0}, {1, 3, 4}, 5, 2.5};
  return s;
}

TEST(MetricsText, EveryLineIsValidExposition) {
  std::string text = metrics_text(sample(), counts());
  std::regex sample_line(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-z_]+="[^"]*"\})? ([-+0-9.eE]+|[-+]?Inf)$)");
  std::regex comment(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$)");
  std::istringstream in(text);
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
  EXPECT_GT(samples, 20);
}

TEST(MetricsText, CarriesTheEngineNumbers) {
  std::string t = metrics_text(sample(), counts());
  for (const char* want : {
           "pagedserve_num_requests_running 3\n",
           "pagedserve_num_requests_waiting 2\n",
           "pagedserve_kv_cache_usage_perc 0.25\n",
           "pagedserve_kv_cache_blocks{state=\"active\"} 25\n",
           "pagedserve_prefix_cache_queries_total 64\n",
           "pagedserve_prefix_cache_hits_total 32\n",
           "pagedserve_prompt_tokens_total 1000\n",
           "pagedserve_generation_tokens_total 2000\n",
           "pagedserve_num_preemptions_total 1\n",
           "pagedserve_max_seqs_in_step 17\n",
           "# TYPE pagedserve_time_to_first_token_seconds histogram\n",
           "pagedserve_time_to_first_token_seconds_bucket{le=\"0.01\"} 1\n",
           "pagedserve_time_to_first_token_seconds_bucket{le=\"1\"} 4\n",
           "pagedserve_time_to_first_token_seconds_bucket{le=\"+Inf\"} 5\n",
           "pagedserve_time_to_first_token_seconds_sum 2.5\n",
           "pagedserve_time_to_first_token_seconds_count 5\n",
           "# TYPE pagedserve_inter_token_latency_seconds histogram\n",
           "# TYPE pagedserve_e2e_request_latency_seconds histogram\n",
           "# TYPE pagedserve_request_queue_time_seconds histogram\n",
           "pagedserve_http_responses_total{code=\"200\"} 7\n",
           "pagedserve_http_responses_total{code=\"429\"} 2\n",
           "pagedserve_http_responses_total{code=\"500\"} 0\n",
       }) {
    EXPECT_NE(t.find(want), std::string::npos) << "missing: " << want;
  }
}

TEST(MetricsText, EmptyEngineIsStillValid) {
  std::string t = metrics_text(EngineStats{}, {});
  EXPECT_NE(t.find("pagedserve_kv_cache_usage_perc 0\n"), std::string::npos);
  EXPECT_NE(t.find("pagedserve_e2e_request_latency_seconds_bucket{le=\"+Inf\"} 0\n"),
            std::string::npos);
}

TEST(HttpCounters, CountsByClass) {
  HttpCounters c;
  c.count(200);
  c.count(204);
  c.count(429);
  c.count(500);
  c.count(-1);  // httplib's "no status" counts as a server error, never out of bounds
  c.count(999);
  auto s = c.snapshot();
  EXPECT_EQ(s[200 - 100], 1u);
  EXPECT_EQ(s[204 - 100], 1u);
  EXPECT_EQ(s[429 - 100], 1u);
  EXPECT_EQ(s[500 - 100], 3u);
}

}  // namespace
}  // namespace ps
