#pragma once
// Chooses, per projection shape and per batch-size bucket, the fastest linear kernel this CPU
// can run: our packed-panel kernel on the active ISA, or OpenBLAS (sgemv at M = 1, sgemm above)
// through ATen. "Never slower than the library it replaced": on a host where OpenBLAS wins some
// shapes or sizes (its AVX2 sgemm on some AMD parts), the engine uses OpenBLAS there.
//
// Each choice is timed at load on the model's own weights, within a bounded budget (2 s for all
// shapes), and cached per machine (CPU model, ISA, threads) and shape in a small JSON file, so
// the next start is instant. Torch-free header.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace ps {

enum class LinearKernel : uint8_t { packed, blas };
const char* linear_kernel_name(LinearKernel k);

// --kernel auto|packed|blas.
enum class LinearMode { auto_tune, packed, blas };
LinearMode parse_linear_mode(const std::string& name);  // throws std::invalid_argument
const char* linear_mode_name(LinearMode mode);

// Rows-per-call buckets: bucket b holds M in [2^b, 2^(b+1)), the last one everything from 512.
inline constexpr int kLinearBuckets = 10;
int linear_bucket(int64_t m);
int64_t linear_bucket_rows(int bucket);  // the M a bucket is timed at: 2^b

struct LinearPlan {
  std::array<LinearKernel, kLinearBuckets> kernel{};  // all packed by default
  LinearKernel for_rows(int64_t m) const { return kernel[size_t(linear_bucket(m))]; }
  bool uses(LinearKernel k) const;
  // "packed" | "blas" | "packed@1-3,blas@4-511,packed@512+"
  std::string describe() const;
};

// Seconds per call of each candidate at one bucket, as measured (or read from the cache).
struct LinearTiming {
  double packed_s = 0, blas_s = 0;
};

class LinearTuner {
 public:
  // cache_path "" = the default ($PAGEDSERVE_TUNING_CACHE, else $XDG_CACHE_HOME or
  // ~/.cache, /pagedserve/linear-tuning.json); "off" = neither read nor write a cache.
  explicit LinearTuner(LinearMode mode, double budget_s = 2.0, std::string cache_path = "");

  // The plan for an fp32 row-major [n, k] weight. In auto mode the first call per shape tunes
  // (or reads the cache); later calls with the same shape return the same plan.
  LinearPlan plan_for(const float* w, int64_t n, int64_t k);

  LinearMode mode() const { return mode_; }
  // One line: mode, ISA, seconds spent, cache use, and each shape's plan.
  std::string summary() const;
  double seconds_spent() const { return spent_s_; }
  const std::map<std::pair<int64_t, int64_t>, std::array<LinearTiming, kLinearBuckets>>& timings()
      const {
    return timings_;
  }

 private:
  LinearPlan tune(const float* w, int64_t n, int64_t k);
  std::string cache_key(int64_t n, int64_t k) const;
  void load_cache();
  void save_cache() const;

  LinearMode mode_;
  double budget_s_;
  double spent_s_ = 0;
  std::string cache_path_;
  std::string machine_;  // CPU model, ISA, threads, BLAS core, build: what a choice depends on
  std::string program_;  // " prog=<name> build=", the part of machine_ before the build ID
  bool cache_hit_any_ = false, tuned_any_ = false;
  std::map<std::pair<int64_t, int64_t>, LinearPlan> plans_;
  std::map<std::pair<int64_t, int64_t>, std::array<LinearTiming, kLinearBuckets>> timings_;
  std::map<std::string, std::string> cache_;  // key -> plan describe() form
};

// Parses LinearPlan::describe()'s form back (the cache stores it). False when malformed.
bool parse_linear_plan(const std::string& text, LinearPlan* plan);

}  // namespace ps
