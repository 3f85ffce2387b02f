// Workload generation, dataset parsing, percentiles, SSE and Prometheus parsing of the bench.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "bench/latency_stats.h"
#include "bench/sse_client.h"
#include "bench/workload.h"

namespace ps {
namespace {

TEST(LatencyStats, PercentilesInterpolateBetweenRanks) {
  LatencySummary s = summarize({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
  EXPECT_DOUBLE_EQ(s.p90, 3.7);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_EQ(summarize({}).count, 0u);
  EXPECT_DOUBLE_EQ(summarize({7}).p99, 7);
}

TEST(Workload, RandomIsSeededExactAndAvoidsSpecialTokens) {
  Workload a = random_workload(8, 64, 128, 6400, 3);
  Workload b = random_workload(8, 64, 128, 6400, 3);
  ASSERT_EQ(a.size(), 8u);
  EXPECT_EQ(a.prompts, b.prompts);
  EXPECT_EQ(a.prompt_tokens(), 8 * 64);
  EXPECT_EQ(a.output_tokens(), 8 * 128);
  for (const auto& p : a.prompts) {
    for (int32_t t : p) {
      EXPECT_GE(t, 3);
      EXPECT_LT(t, 6400);
    }
  }
  EXPECT_NE(random_workload(8, 64, 128, 6400, 4).prompts, a.prompts);
}

TEST(Workload, RangeRatioVariesLengthsWithinBounds) {
  Workload w = random_workload(200, 100, 50, 6400, 1, 0.5);
  bool varied = false;
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_GE(w.prompts[i].size(), 50u);
    EXPECT_LE(w.prompts[i].size(), 150u);
    EXPECT_GE(w.output_lens[i], 25);
    EXPECT_LE(w.output_lens[i], 75);
    varied |= w.prompts[i].size() != 100;
  }
  EXPECT_TRUE(varied);
}

TEST(Workload, PrefixSharedOrDistinct) {
  Workload shared = prefix_workload(4, 32, 8, 16, 6400, 0, true);
  Workload distinct = prefix_workload(4, 32, 8, 16, 6400, 0, false);
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(shared.prompts[i].size(), 40u);
    ASSERT_EQ(distinct.prompts[i].size(), 40u);
  }
  auto prefix = [](const std::vector<int32_t>& p) {
    return std::vector<int32_t>(p.begin(), p.begin() + 32);
  };
  EXPECT_EQ(prefix(shared.prompts[0]), prefix(shared.prompts[3]));
  EXPECT_NE(shared.prompts[0], shared.prompts[3]);  // own suffixes
  EXPECT_NE(prefix(distinct.prompts[0]), prefix(distinct.prompts[3]));
}

std::string write_temp(const std::string& text) {
  std::string path = testing::TempDir() + "bench_dataset_" +
                     testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl";
  std::ofstream(path) << text;
  return path;
}

// A stand-in tokenizer: one token per character.
std::vector<int32_t> chars(const std::string& s) {
  return std::vector<int32_t>(s.begin(), s.end());
}

TEST(Dataset, ReadsPromptAndShareGptLines) {
  const std::string path = write_temp(
      "{\"prompt\": \"hello\", \"output_len\": 7}\n"
      "\n"
      "{\"prompt\": [5, 6, 7]}\n"
      "{\"conversations\": [{\"from\": \"system\", \"value\": \"s\"}, "
      "{\"from\": \"human\", \"value\": \"hi\"}, {\"from\": \"gpt\", \"value\": \"abcd\"}]}\n");
  Workload w = load_dataset(path, chars, 9, 0);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w.prompts[0], chars("hello"));
  EXPECT_EQ(w.output_lens[0], 7);
  EXPECT_EQ(w.prompts[1], (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(w.output_lens[1], 9);  // the default
  EXPECT_EQ(w.prompts[2], chars("hi"));
  EXPECT_EQ(w.output_lens[2], 4);  // the reply's token count
  EXPECT_EQ(load_dataset(path, chars, 9, 2).size(), 2u);
}

TEST(Dataset, MalformedLineNamesFileAndLine) {
  const std::string path = write_temp("{\"prompt\": \"ok\"}\n{\"text\": 1}\n");
  try {
    load_dataset(path, chars, 4, 0);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_dataset(path + ".missing", chars, 4, 0), std::runtime_error);
}

TEST(SseParser, SplitsEventsAcrossArbitraryChunks) {
  const std::string stream =
      "data: {\"a\":1}\n\ndata: {\"b\":2}\r\n\r\n: comment\n\ndata: [DONE]\n\n";
  for (size_t cut = 0; cut < stream.size(); ++cut) {
    SseParser parser;
    std::vector<std::string> got;
    auto sink = [&](const std::string& d) { got.push_back(d); };
    parser.feed(stream.data(), cut, sink);
    parser.feed(stream.data() + cut, stream.size() - cut, sink);
    ASSERT_EQ(got.size(), 3u) << "cut at " << cut;
    EXPECT_EQ(got[0], "{\"a\":1}");
    EXPECT_EQ(got[2], "[DONE]");
  }
}

TEST(Prometheus, SumsExactNameOnly) {
  const std::string text =
      "# HELP pagedserve_x help\n"
      "pagedserve_x 3\n"
      "pagedserve_x_total 100\n"
      "pagedserve_y{state=\"a\"} 2\n";
  EXPECT_EQ(prometheus_value(text, "pagedserve_x"), 3.0);
  EXPECT_EQ(prometheus_value(text, "pagedserve_y{state=\"a\"}"), 2.0);
  EXPECT_FALSE(prometheus_value(text, "pagedserve_z").has_value());
}

}  // namespace
}  // namespace ps
