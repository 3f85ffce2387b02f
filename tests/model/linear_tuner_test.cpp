// The linear autotuner (kernels/linear_tuner.h) and the Projection that runs its plan: each
// candidate forced gives the double-precision result; a tuned plan follows its own timings; the
// per-machine cache is written, read back, and ignored when corrupt.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cpu/projection.h"
#include "kernels/blas_core.h"
#include "kernels/build_id.h"
#include "kernels/linear_tuner.h"
#include "torch_bridge/torch_tensor.h"

#include "tests/model/randn.h"

namespace ps {
namespace {

using testing_util::randn;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("pagedserve-tuner-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

TEST(LinearTuner, BucketsArePowersOfTwoUpTo512) {
  EXPECT_EQ(linear_bucket(1), 0);
  EXPECT_EQ(linear_bucket(2), 1);
  EXPECT_EQ(linear_bucket(3), 1);
  EXPECT_EQ(linear_bucket(4), 2);
  EXPECT_EQ(linear_bucket(511), 8);
  EXPECT_EQ(linear_bucket(512), 9);
  EXPECT_EQ(linear_bucket(100000), 9);
  EXPECT_EQ(linear_bucket_rows(9), 512);
}

TEST(LinearTuner, PlanDescriptionsRoundTrip) {
  LinearPlan p;
  EXPECT_EQ(p.describe(), "packed");
  p.kernel[2] = p.kernel[3] = LinearKernel::blas;
  p.kernel[9] = LinearKernel::blas;
  EXPECT_EQ(p.describe(), "packed@1-3,blas@4-15,packed@16-511,blas@512+");
  LinearPlan back;
  ASSERT_TRUE(parse_linear_plan(p.describe(), &back));
  EXPECT_EQ(back.kernel, p.kernel);
  ASSERT_TRUE(parse_linear_plan("blas", &back));
  EXPECT_FALSE(back.uses(LinearKernel::packed));
  for (const char* bad : {"", "fast", "packed@1-3", "packed@2+", "blas@1-4,packed@5+",
                          "packed@1-3,gemm@4+", "packed@1-3,blas@4-15x"}) {
    EXPECT_FALSE(parse_linear_plan(bad, &back)) << bad;
  }
}

TEST(LinearTuner, ModeNamesParseAndUnknownOnesAreRefusedByName) {
  EXPECT_EQ(parse_linear_mode("auto"), LinearMode::auto_tune);
  EXPECT_EQ(parse_linear_mode("packed"), LinearMode::packed);
  EXPECT_EQ(parse_linear_mode("blas"), LinearMode::blas);
  try {
    parse_linear_mode("mkl");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'mkl'"), std::string::npos);
  }
}

// Each candidate forced (what --kernel packed|blas does), through Projection, at M = 1 (the
// sgemv path), a tile-height tail and a multi-chunk M, with bias and accumulate.
TEST(LinearTuner, EveryForcedCandidateMatchesTheDoubleReference) {
  const int64_t n = 70, k = 45;
  const auto w = randn(size_t(n * k), 1);
  const auto bias = randn(size_t(n), 2);
  const at::Tensor wt = at::from_blob(const_cast<float*>(w.data()), {n, k}).clone();
  for (LinearMode mode : {LinearMode::packed, LinearMode::blas}) {
    LinearTuner tuner(mode, 2.0, "off");
    const LinearPlan plan = tuner.plan_for(w.data(), n, k);
    EXPECT_EQ(plan.uses(LinearKernel::blas), mode == LinearMode::blas);
    const Projection proj(from_torch(wt), plan);
    for (int64_t m : {1, 7, 130}) {
      for (int variant = 0; variant < 4; ++variant) {
        const bool with_bias = variant & 1, accumulate = variant & 2;
        const auto x = randn(size_t(m * k), 3);
        const auto y0 = randn(size_t(m * n), 4);
        std::vector<float> y = y0;
        proj.run(x.data(), m, with_bias ? bias.data() : nullptr, y.data(), accumulate);
        double worst = 0;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double ref = accumulate ? y0[size_t(i * n + j)] : 0.0;
            if (with_bias) ref += bias[size_t(j)];
            for (int64_t p = 0; p < k; ++p)
              ref += double(x[size_t(i * k + p)]) * w[size_t(j * k + p)];
            worst = std::max(worst, std::abs(ref - y[size_t(i * n + j)]));
          }
        }
        EXPECT_LT(worst, 1e-4) << linear_mode_name(mode) << " m " << m << " variant " << variant;
      }
    }
  }
}

// A plan that mixes kernels keeps both forms and runs each bucket on its own kernel.
TEST(LinearTuner, MixedPlanRunsBothKernels) {
  const int64_t n = 40, k = 33;
  const auto w = randn(size_t(n * k), 5);
  const at::Tensor wt = at::from_blob(const_cast<float*>(w.data()), {n, k}).clone();
  LinearPlan plan;
  plan.kernel[0] = LinearKernel::blas;  // M = 1 on BLAS, the rest packed
  const Projection mixed(from_torch(wt), plan);
  const Projection packed_only(from_torch(wt), LinearPlan{});
  EXPECT_EQ(mixed.bytes(), packed_only.bytes() + n * k * int64_t(sizeof(float)));
  // Each call reads one of the two copies: the dense one at M = 1, the panels at M = 2.
  EXPECT_EQ(mixed.bytes_read(1), n * k * int64_t(sizeof(float)));
  EXPECT_EQ(mixed.bytes_read(2), packed_only.bytes());
  EXPECT_EQ(packed_only.bytes_read(1), packed_only.bytes());
  for (int64_t m : {1, 5}) {
    const auto x = randn(size_t(m * k), 6);
    std::vector<float> a(size_t(m * n)), b(size_t(m * n));
    mixed.run(x.data(), m, nullptr, a.data(), false);
    packed_only.run(x.data(), m, nullptr, b.data(), false);
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4) << "m " << m;
  }
}

// auto: every bucket is timed (this shape is small, far inside the budget), and each choice
// follows the measured times (OpenBLAS only when 5% faster).
TEST(LinearTuner, AutoChoiceFollowsItsOwnTimings) {
  const int64_t n = 96, k = 64;
  const auto w = randn(size_t(n * k), 7);
  LinearTuner tuner(LinearMode::auto_tune, 5.0, "off");
  const LinearPlan plan = tuner.plan_for(w.data(), n, k);
  const auto& t = tuner.timings().at({n, k});
  for (int b = 0; b < kLinearBuckets; ++b) {
    ASSERT_GT(t[size_t(b)].packed_s, 0) << "bucket " << b;
    ASSERT_GT(t[size_t(b)].blas_s, 0) << "bucket " << b;
    const bool blas_wins = t[size_t(b)].blas_s * 1.05 < t[size_t(b)].packed_s;
    EXPECT_EQ(plan.kernel[size_t(b)] == LinearKernel::blas, blas_wins) << "bucket " << b;
  }
  EXPECT_GT(tuner.seconds_spent(), 0);
  // The same shape again is not re-tuned.
  const double spent = tuner.seconds_spent();
  EXPECT_EQ(tuner.plan_for(w.data(), n, k).kernel, plan.kernel);
  EXPECT_EQ(tuner.seconds_spent(), spent);
  EXPECT_NE(tuner.summary().find("96x64"), std::string::npos) << tuner.summary();
}

// The blas candidate is whatever kernel OpenBLAS chose for this CPU (OPENBLAS_CORETYPE overrides
// it): the summary names it, and the cache keys on it, so an entry tuned against another core
// is not read back.
TEST(LinearTuner, SummaryAndCacheKeyNameTheOpenBlasCore) {
  const std::string core = blas_core_name();
  EXPECT_NE(core, "unknown") << "ATen's BLAS here is OpenBLAS (Debian's libtorch)";
  EXPECT_EQ(core.find(' '), std::string::npos) << "'" << core << "'";
  const std::string path = temp_path("core.json");
  std::filesystem::remove(path);
  const auto w = randn(64 * 32, 10);
  {
    LinearTuner tuner(LinearMode::auto_tune, 5.0, path);
    tuner.plan_for(w.data(), 64, 32);
    EXPECT_NE(tuner.summary().find("against OpenBLAS core " + core + ")"), std::string::npos)
        << tuner.summary();
  }
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(
      text.find(" blas=" + core + " prog=test_model build=" + build_id().substr(0, 16) + " 64x32"),
      std::string::npos)
      << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A plan cached by an earlier build of this program was timed with that build's kernels: it is
// neither used nor kept (a new one is tuned). What other programs saved is left alone.
TEST(LinearTuner, CacheDropsThisProgramsEarlierBuildsAndKeepsOtherPrograms) {
  const std::string path = temp_path("builds.json");
  std::filesystem::remove(path);
  const auto w = randn(64 * 32, 12);
  {
    LinearTuner tuner(LinearMode::auto_tune, 5.0, path);
    tuner.plan_for(w.data(), 64, 32);
  }
  std::string text = read_text(path);
  const std::string ours = "build=" + build_id().substr(0, 16) + " 64x32";
  const size_t at = text.find(ours);
  ASSERT_NE(at, std::string::npos) << text;
  const size_t key_start = text.rfind('"', at) + 1;
  const std::string key = text.substr(key_start, at + ours.size() - key_start);
  // The same key as another build of test_model, and as another program; both plans are ones
  // no timing here would pick, so a read-back would show.
  std::string old_build = key;
  old_build.replace(old_build.find("build=") + 6, 16, "0123456789abcdef");
  std::string other_program = key;
  other_program.replace(other_program.find("prog=test_model"), 15, "prog=otherprog");
  {
    std::ofstream out(path);
    out << "{\"version\": 1, \"plans\": {\"" << old_build << "\": \"blas@1-1,packed@2+\", \""
        << other_program << "\": \"blas@1-3,packed@4+\"}}\n";
  }
  {
    LinearTuner tuner(LinearMode::auto_tune, 5.0, path);
    tuner.plan_for(w.data(), 64, 32);
    EXPECT_EQ(tuner.summary().find("cached"), std::string::npos) << tuner.summary();
  }
  text = read_text(path);
  EXPECT_EQ(text.find(old_build), std::string::npos) << text;
  EXPECT_NE(text.find(key), std::string::npos) << text;
  EXPECT_NE(text.find("\"" + other_program + "\": \"blas@1-3,packed@4+\""), std::string::npos)
      << text;
  std::filesystem::remove(path);
}

// The ID is the one the linker wrote into this test binary, as readelf reads it from the file.
TEST(BuildId, MatchesReadelfOfThisBinary) {
  const std::string id = build_id();
  ASSERT_NE(id, "unknown") << "Debian's gcc links with --build-id";
  EXPECT_EQ(id.size(), 40u) << id;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  FILE* p = ::popen(("readelf -n '" + self + "' 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  ::pclose(p);
  EXPECT_NE(out.find("Build ID: " + id), std::string::npos) << out;
}

// A zero budget times nothing: every bucket falls back to the packed kernel.
TEST(LinearTuner, ExhaustedBudgetFallsBackToPacked) {
  const auto w = randn(32 * 32, 8);
  LinearTuner tuner(LinearMode::auto_tune, 0.0, "off");
  EXPECT_FALSE(tuner.plan_for(w.data(), 32, 32).uses(LinearKernel::blas));
}

TEST(LinearTuner, CacheIsWrittenReadBackAndIgnoredWhenCorrupt) {
  const std::string path = temp_path("cache.json");
  std::filesystem::remove(path);
  const int64_t n = 64, k = 32;
  const auto w = randn(size_t(n * k), 9);
  LinearPlan first;
  {
    LinearTuner tuner(LinearMode::auto_tune, 5.0, path);
    first = tuner.plan_for(w.data(), n, k);
    EXPECT_EQ(tuner.summary().find("cached"), std::string::npos);
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  {
    // Rewrite the cached plan to one the timing would not pick: a read cache must win.
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string was = "\"";  // (built by appends: GCC 12's -Wrestrict misfires on "x" + str)
    was += first.describe();
    was += '"';
    const size_t at = text.find(was);
    ASSERT_NE(at, std::string::npos) << text;
    text.replace(at, was.size(), "\"blas@1-1,packed@2+\"");
    std::ofstream(path) << text;
  }
  {
    LinearTuner tuner(LinearMode::auto_tune, 5.0, path);
    const LinearPlan p = tuner.plan_for(w.data(), n, k);
    EXPECT_EQ(p.describe(), "blas@1-1,packed@2+");
    EXPECT_EQ(tuner.seconds_spent(), 0);
    EXPECT_NE(tuner.summary().find("cached"), std::string::npos) << tuner.summary();
  }
  std::ofstream(path) << "{not json";
  {
    LinearTuner tuner(LinearMode::auto_tune, 5.0, path);
    tuner.plan_for(w.data(), n, k);
    EXPECT_GT(tuner.seconds_spent(), 0);  // re-tuned
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace ps
