#include "kernels/linear_tuner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <unistd.h>

#include "kernels/blas_core.h"
#include "kernels/blas_linear.h"
#include "kernels/build_id.h"
#include "kernels/kernel_isa.h"
#include "kernels/packed_linear.h"
#include "kernels/parallel_for.h"

namespace ps {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown-cpu";
}

// The running program's file name ("pagedserve", "test_model"), without spaces.
std::string program_name() {
  std::error_code ec;
  std::string name = std::filesystem::read_symlink("/proc/self/exe", ec).filename().string();
  if (ec || name.empty()) return "unknown";
  std::replace(name.begin(), name.end(), ' ', '_');
  return name;
}

std::string default_cache_path() {
  if (const char* p = std::getenv("PAGEDSERVE_TUNING_CACHE"); p != nullptr && *p != '\0') return p;
  std::string base;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    base = x;
  } else if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    base = std::string(h) + "/.cache";
  } else {
    return "off";
  }
  return base + "/pagedserve/linear-tuning.json";
}

// Per bucket, no more than this is spent timing (both candidates): a few calls suffice to rank
// two kernels whose gap matters, and the budget goes to the large-M buckets' longer calls.
constexpr double kBucketBudgetS = 0.04;
constexpr int kMaxReps = 5;
constexpr double kBlasMargin = 1.05;

}  // namespace

const char* linear_kernel_name(LinearKernel k) {
  return k == LinearKernel::blas ? "blas" : "packed";
}

LinearMode parse_linear_mode(const std::string& name) {
  if (name == "auto") return LinearMode::auto_tune;
  if (name == "packed") return LinearMode::packed;
  if (name == "blas") return LinearMode::blas;
  throw std::invalid_argument("unknown --kernel '" + name + "' (expected auto, packed or blas)");
}

const char* linear_mode_name(LinearMode mode) {
  switch (mode) {
    case LinearMode::packed:
      return "packed";
    case LinearMode::blas:
      return "blas";
    case LinearMode::auto_tune:
      break;
  }
  return "auto";
}

int linear_bucket(int64_t m) {
  int b = 0;
  while (b + 1 < kLinearBuckets && (int64_t{2} << b) <= m) ++b;
  return b;
}

int64_t linear_bucket_rows(int bucket) {
  return int64_t{1} << bucket;
}

bool LinearPlan::uses(LinearKernel k) const {
  return std::find(kernel.begin(), kernel.end(), k) != kernel.end();
}

std::string LinearPlan::describe() const {
  if (!uses(LinearKernel::blas)) return "packed";
  if (!uses(LinearKernel::packed)) return "blas";
  std::string out;
  for (int b = 0; b < kLinearBuckets;) {
    int e = b;
    while (e + 1 < kLinearBuckets && kernel[size_t(e + 1)] == kernel[size_t(b)]) ++e;
    if (!out.empty()) out += ',';
    out += linear_kernel_name(kernel[size_t(b)]);
    out += '@';
    out += std::to_string(linear_bucket_rows(b));
    if (e == kLinearBuckets - 1) {
      out += '+';
    } else {
      out += '-';
      out += std::to_string(linear_bucket_rows(e + 1) - 1);
    }
    b = e + 1;
  }
  return out;
}

bool parse_linear_plan(const std::string& text, LinearPlan* plan) {
  LinearPlan p;
  if (text == "packed" || text == "blas") {
    p.kernel.fill(text == "blas" ? LinearKernel::blas : LinearKernel::packed);
    *plan = p;
    return true;
  }
  std::stringstream ss(text);
  std::string item;
  int next = 0;
  while (std::getline(ss, item, ',')) {
    const size_t at = item.find('@');
    if (at == std::string::npos) return false;
    const std::string name = item.substr(0, at);
    if (name != "packed" && name != "blas") return false;
    const LinearKernel k = name == "blas" ? LinearKernel::blas : LinearKernel::packed;
    const std::string range = item.substr(at + 1);
    char* end = nullptr;
    const long lo = std::strtol(range.c_str(), &end, 10);
    if (lo != linear_bucket_rows(next)) return false;
    int last = kLinearBuckets - 1;
    if (*end == '-') {
      const long hi = std::strtol(end + 1, &end, 10);
      last = linear_bucket(hi);
      if (linear_bucket_rows(last + 1) - 1 != hi || *end != '\0') return false;
    } else if (std::string(end) != "+") {
      return false;
    }
    for (int b = next; b <= last; ++b) p.kernel[size_t(b)] = k;
    next = last + 1;
  }
  if (next != kLinearBuckets) return false;
  *plan = p;
  return true;
}

LinearTuner::LinearTuner(LinearMode mode, double budget_s, std::string cache_path)
    : mode_(mode),
      budget_s_(budget_s),
      cache_path_(cache_path.empty() ? default_cache_path() : std::move(cache_path)) {
  // The OpenBLAS kernel too: OPENBLAS_CORETYPE changes the blas candidate on the same CPU. And
  // the build: our kernels' speed is the build's (kernels/build_id.h). The program's name lets
  // load_cache drop what its earlier builds saved without touching other programs' entries
  // (the server's and the tests' binaries share one cache file).
  program_ = " prog=" + program_name() + " build=";
  machine_ = cpu_model() + " isa=" + kernel_isa_name(active_kernel_isa()) +
             " threads=" + std::to_string(parallel_threads()) + " blas=" + blas_core_name() +
             program_ + build_id().substr(0, 16);
  if (mode_ == LinearMode::auto_tune) load_cache();
}

std::string LinearTuner::cache_key(int64_t n, int64_t k) const {
  return machine_ + " " + std::to_string(n) + "x" + std::to_string(k);
}

void LinearTuner::load_cache() {
  if (cache_path_ == "off") return;
  std::ifstream in(cache_path_);
  if (!in) return;
  // A cache that does not parse is ignored (and rewritten): it only ever saves time.
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("version", 0) != 1 || !j.contains("plans") ||
      !j["plans"].is_object()) {
    return;
  }
  const std::string this_build = program_ + build_id().substr(0, 16) + " ";
  for (const auto& [key, value] : j["plans"].items()) {
    const bool stale = key.find(program_) != std::string::npos &&
                       key.find(this_build) == std::string::npos;  // this program, another build
    if (value.is_string() && !stale) cache_[key] = value.get<std::string>();
  }
}

void LinearTuner::save_cache() const {
  if (cache_path_ == "off") return;
  nlohmann::json j = {{"version", 1}, {"plans", cache_}};
  std::error_code ec;
  const std::filesystem::path path(cache_path_);
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  // Write then rename: two processes starting at once never leave a torn file.
  const std::string tmp = cache_path_ + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    if (!out) return;  // an unwritable cache only costs the next start its tuning time
    out << j.dump(1) << "\n";
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

LinearPlan LinearTuner::plan_for(const float* w, int64_t n, int64_t k) {
  LinearPlan plan;
  if (mode_ == LinearMode::packed) return plan;
  if (mode_ == LinearMode::blas) {
    plan.kernel.fill(LinearKernel::blas);
    return plan;
  }
  const auto shape = std::make_pair(n, k);
  if (auto it = plans_.find(shape); it != plans_.end()) return it->second;
  const std::string key = cache_key(n, k);
  if (auto it = cache_.find(key); it != cache_.end() && parse_linear_plan(it->second, &plan)) {
    cache_hit_any_ = true;
  } else {
    plan = tune(w, n, k);
    tuned_any_ = true;
    cache_[key] = plan.describe();
    save_cache();
  }
  plans_[shape] = plan;
  return plan;
}

LinearPlan LinearTuner::tune(const float* w, int64_t n, int64_t k) {
  const double t_start = now_s();
  const Tensor dense = Tensor::view(const_cast<float*>(w), {n, k}, DType::f32, nullptr);
  const PackedWeight packed(w, n, k);
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.f, 1.f);
  const int64_t max_rows = linear_bucket_rows(kLinearBuckets - 1);
  std::vector<float> x(size_t(max_rows * k)), y(size_t(max_rows * n));
  for (float& v : x) v = normal(rng);

  LinearPlan plan;
  std::array<LinearTiming, kLinearBuckets>& timing = timings_[{n, k}];
  int decided = -1;
  for (int b = 0; b < kLinearBuckets; ++b) {
    // Out of budget: the larger buckets keep the last measured bucket's choice (the ranking of
    // two kernels changes slowly with M once M is large).
    if (spent_s_ + (now_s() - t_start) > budget_s_) break;
    const int64_t m = linear_bucket_rows(b);
    PackedLinearArgs a;
    a.x = x.data();
    a.w = &packed;
    a.y = y.data();
    a.m = m;
    auto run_packed = [&] { packed_linear(a); };
    auto run_blas = [&] { blas_linear(dense, x.data(), k, m, nullptr, y.data(), n, false); };
    auto timed = [](auto&& fn) {
      const double t0 = now_s();
      fn();
      return now_s() - t0;
    };
    run_packed();  // warm: first touch of y, thread pool awake
    run_blas();
    double best_packed = 1e30, best_blas = 1e30;
    const double t_bucket = now_s();
    for (int rep = 0; rep < kMaxReps; ++rep) {
      best_packed = std::min(best_packed, timed(run_packed));
      best_blas = std::min(best_blas, timed(run_blas));
      if (now_s() - t_bucket > kBucketBudgetS) break;
    }
    timing[size_t(b)] = {best_packed, best_blas};
    // OpenBLAS only when clearly faster: our kernel gives a row the same bits whatever the
    // batch (packed_kernels.h), OpenBLAS does not, and a near-tie is timing noise.
    plan.kernel[size_t(b)] =
        best_blas * kBlasMargin < best_packed ? LinearKernel::blas : LinearKernel::packed;
    decided = b;
  }
  for (int b = decided + 1; b < kLinearBuckets; ++b) {
    plan.kernel[size_t(b)] = decided >= 0 ? plan.kernel[size_t(decided)] : LinearKernel::packed;
  }
  spent_s_ += now_s() - t_start;
  return plan;
}

std::string LinearTuner::summary() const {
  std::string s = std::string("kernel isa ") + kernel_isa_name(active_kernel_isa()) + ", linear " +
                  linear_mode_name(mode_);
  if (mode_ == LinearMode::auto_tune) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), " (tuned %.2f s%s", spent_s_,
                  cache_hit_any_ ? (tuned_any_ ? ", partly cached" : ", cached") : "");
    s += buf;
    s += "; against OpenBLAS core " + blas_core_name() + ")";
    s += "; plans by weight shape (out x in)";
    for (const auto& [shape, plan] : plans_) {
      s += "; " + std::to_string(shape.first) + "x" + std::to_string(shape.second) + " " +
           plan.describe();
    }
  }
  return s;
}

}  // namespace ps
