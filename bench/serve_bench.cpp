#include "bench/serve_bench.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "bench/sse_client.h"

namespace ps {
namespace {

using json = nlohmann::json;

// When each request may be sent, in seconds after the level starts.
std::vector<double> arrival_offsets(const ServeBenchOptions& o, size_t n) {
  std::vector<double> t(n, 0.0);
  if (o.arrival == Arrival::kBurst) return t;
  if (!(o.rate > 0)) throw std::invalid_argument("--request-rate must be > 0 for this arrival");
  std::mt19937_64 rng(o.seed);
  std::exponential_distribution<double> gap(o.rate);
  double at = 0;
  for (size_t i = 0; i < n; ++i) {
    t[i] = at;
    at += o.arrival == Arrival::kFixedRate ? 1.0 / o.rate : gap(rng);
  }
  return t;
}

// "\r[#####-----] 37/64 ..." on stderr while a level runs, redrawn a few times a second when
// stderr is a terminal and every 10 s otherwise (CI logs stay short).
class ProgressBar {
 public:
  ProgressBar(bool on, int32_t concurrency, size_t total, const std::atomic<size_t>& done,
              const std::atomic<size_t>& failed)
      : on_(on),
        tty_(isatty(2) != 0),
        concurrency_(concurrency),
        total_(total),
        done_(done),
        failed_(failed),
        t0_(BenchClock::now()) {
    if (on_) thread_ = std::thread([this] { loop(); });
  }
  ~ProgressBar() {
    if (!on_) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    draw();
    std::fputc('\n', stderr);
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    const auto period = tty_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(10000);
    while (!cv_.wait_for(lock, period, [this] { return stop_; })) draw();
  }
  void draw() const {
    const size_t d = done_.load(), f = failed_.load();
    constexpr int kWidth = 30;
    const int filled = total_ ? static_cast<int>(kWidth * d / total_) : kWidth;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '-');
    const double s = std::chrono::duration<double>(BenchClock::now() - t0_).count();
    std::fprintf(stderr, "%sconcurrency %-4d [%s] %zu/%zu done, %zu failed, %.1f s",
                 tty_ ? "\r" : "", concurrency_, bar.c_str(), d, total_, f, s);
    if (!tty_) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

  bool on_, tty_;
  int32_t concurrency_;
  size_t total_;
  const std::atomic<size_t>& done_;
  const std::atomic<size_t>& failed_;
  BenchClock::time_point t0_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

json summary_ms(const LatencySummary& s) {
  return {{"count", s.count},   {"mean", s.mean * 1e3}, {"p50", s.p50 * 1e3},
          {"p90", s.p90 * 1e3}, {"p99", s.p99 * 1e3},   {"max", s.max * 1e3}};
}

}  // namespace

void check_server(const ServeBenchOptions& opts) {
  CompletionClient client(opts.url, std::min(opts.request_timeout_s, 30.0), opts.api_key);
  std::string error;
  // A server still loading its model answers 503; wait for it (bounded) rather than fail.
  const auto give_up = BenchClock::now() + std::chrono::seconds(60);
  while (!client.get("/health", &error) && error.find("HTTP 503") != std::string::npos &&
         BenchClock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  if (!client.get("/health", &error)) {
    throw std::runtime_error("--url " + opts.url + ": the server is not answering (" + error +
                             "). Start one with `pagedserve serve`.");
  }
  RequestRecord r = client.stream_completion({10, 11, 12, 13}, 2, opts.model);
  if (!r.ok) throw std::runtime_error("--url " + opts.url + ": a test request failed: " + r.error);
}

LevelReport run_serve_level(const ServeBenchOptions& opts, const Workload& w, int32_t concurrency) {
  const size_t n = w.size();
  const std::vector<double> offsets = arrival_offsets(opts, n);
  const size_t workers = concurrency > 0 ? std::min(n, static_cast<size_t>(concurrency)) : n;
  std::vector<RequestRecord> records(n);
  std::vector<char> sent(n, 0);
  std::atomic<size_t> next{0}, done{0}, failed{0};
  const BenchClock::time_point t0 = BenchClock::now();
  const auto deadline = t0 + std::chrono::duration_cast<BenchClock::duration>(
                                 std::chrono::duration<double>(opts.max_duration_s));
  {
    ProgressBar bar(opts.progress, concurrency, n, done, failed);
    std::vector<std::thread> threads;
    for (size_t k = 0; k < workers; ++k) {
      threads.emplace_back([&] {
        // One keep-alive connection per worker, as a real client pool would hold.
        CompletionClient client(opts.url, opts.request_timeout_s, opts.api_key);
        for (size_t i; (i = next.fetch_add(1)) < n;) {
          const auto at = t0 + std::chrono::duration_cast<BenchClock::duration>(
                                   std::chrono::duration<double>(offsets[i]));
          if (at > deadline) continue;
          std::this_thread::sleep_until(at);
          if (BenchClock::now() > deadline) continue;
          const std::string& model =
              opts.model_mix.empty() ? opts.model : opts.model_mix[i % opts.model_mix.size()];
          records[i] = client.stream_completion(w.prompts[i], w.output_lens[i], model);
          sent[i] = 1;
          if (!records[i].ok) failed.fetch_add(1);
          done.fetch_add(1);
        }
      });
    }
    for (auto& t : threads) t.join();
  }

  LevelReport r;
  r.concurrency = concurrency > 0 ? concurrency : static_cast<int32_t>(n);
  r.planned = n;
  std::vector<double> ttft, tpot, itl, e2e;
  BenchClock::time_point first = BenchClock::time_point::max(), last = t0;
  for (size_t i = 0; i < n; ++i) {
    const RequestRecord& rec = records[i];
    if (!sent[i]) {
      ++r.not_sent;
      continue;
    }
    first = std::min(first, rec.start);
    last = std::max(last, rec.start + std::chrono::duration_cast<BenchClock::duration>(
                                          std::chrono::duration<double>(rec.e2e_s)));
    if (!rec.ok) {
      ++r.failed;
      if (r.errors.size() < 5)
        r.errors.push_back("request " + std::to_string(i) + ": " + rec.error);
      continue;
    }
    ++r.completed;
    r.prompt_tokens += rec.prompt_tokens;
    r.output_tokens += rec.completion_tokens;
    r.cached_tokens += rec.cached_tokens;
    r.expected_output_tokens += w.output_lens[i];
    if (rec.completion_tokens != w.output_lens[i]) ++r.length_mismatches;
    ttft.push_back(rec.ttft_s);
    e2e.push_back(rec.e2e_s);
    if (rec.completion_tokens > 1) {
      tpot.push_back((rec.e2e_s - rec.ttft_s) / static_cast<double>(rec.completion_tokens - 1));
    }
    itl.insert(itl.end(), rec.itl_s.begin(), rec.itl_s.end());
  }
  r.duration_s = first == BenchClock::time_point::max()
                     ? 0
                     : std::chrono::duration<double>(last - first).count();
  r.ttft = summarize(std::move(ttft));
  r.tpot = summarize(std::move(tpot));
  r.itl = summarize(std::move(itl));
  r.e2e = summarize(std::move(e2e));
  return r;
}

json to_json(const LevelReport& r) {
  return {{"concurrency", r.concurrency},
          {"requests_planned", r.planned},
          {"requests_completed", r.completed},
          {"requests_failed", r.failed},
          {"requests_not_sent", r.not_sent},
          {"length_mismatches", r.length_mismatches},
          {"duration_s", r.duration_s},
          {"prompt_tokens", r.prompt_tokens},
          {"output_tokens", r.output_tokens},
          {"expected_output_tokens", r.expected_output_tokens},
          {"cached_prompt_tokens", r.cached_tokens},
          {"request_throughput", r.request_throughput()},
          {"output_token_throughput", r.output_throughput()},
          {"total_token_throughput", r.total_throughput()},
          {"ttft_ms", summary_ms(r.ttft)},
          {"tpot_ms", summary_ms(r.tpot)},
          {"itl_ms", summary_ms(r.itl)},
          {"e2e_ms", summary_ms(r.e2e)},
          {"errors", r.errors}};
}

void print_level_header() {
  std::printf("%5s %5s %4s %7s %8s %8s | %-20s | %-20s | %-20s | %-20s\n", "conc", "done", "fail",
              "req/s", "out/s", "total/s", "TTFT ms mean/p50/p99", "TPOT ms mean/p50/p99",
              "ITL ms mean/p50/p99", "E2E s mean/p50/p99");
}

void print_level(const LevelReport& r) {
  auto ms = [](const LatencySummary& s, double k) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%6.1f %6.1f %6.1f", s.mean * k, s.p50 * k, s.p99 * k);
    return std::string(buf);
  };
  std::printf("%5d %5zu %4zu %7.2f %8.1f %8.1f | %-20s | %-20s | %-20s | %-20s\n", r.concurrency,
              r.completed, r.failed, r.request_throughput(), r.output_throughput(),
              r.total_throughput(), ms(r.ttft, 1e3).c_str(), ms(r.tpot, 1e3).c_str(),
              ms(r.itl, 1e3).c_str(), ms(r.e2e, 1.0).c_str());
  for (const auto& e : r.errors) std::printf("      error: %s\n", e.c_str());
  if (r.not_sent) std::printf("      %zu requests not sent: --max-duration reached\n", r.not_sent);
  if (r.length_mismatches) {
    std::printf("      %zu requests returned a different number of tokens than asked\n",
                r.length_mismatches);
  }
  std::fflush(stdout);
}

}  // namespace ps
