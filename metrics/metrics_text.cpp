#include "metrics/metrics_text.h"

#include <cstdio>

namespace ps {
namespace {

constexpr const char* kPrefix = "pagedserve_";

// Prometheus floats: 15 significant digits (exact for counters below 1e15), "+Inf" for the open
// bucket.
std::string fmt(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + kPrefix + name + " " + help + "\n";
  out += std::string("# TYPE ") + kPrefix + name + " " + type + "\n";
}

template <typename T>
void metric(std::string& out, const char* name, const char* type, const char* help, T value) {
  header(out, name, type, help);
  out += std::string(kPrefix) + name + " " + fmt(static_cast<double>(value)) + "\n";
}

void histogram(std::string& out, const char* name, const char* help, const HistogramSnapshot& h) {
  header(out, name, "histogram", help);
  std::string base = std::string(kPrefix) + name;
  for (size_t i = 0; i < h.bounds.size() && i < h.counts.size(); ++i) {
    out += base + "_bucket{le=\"" + fmt(h.bounds[i]) + "\"} " + std::to_string(h.counts[i]) + "\n";
  }
  out += base + "_bucket{le=\"+Inf\"} " + std::to_string(h.count) + "\n";
  out += base + "_sum " + fmt(h.sum) + "\n";
  out += base + "_count " + std::to_string(h.count) + "\n";
}

}  // namespace

void HttpCounters::count(int status) {
  size_t i = status >= 100 && status < 600 ? static_cast<size_t>(status - 100) : 400;
  by_status_[i].fetch_add(1, std::memory_order_relaxed);
}

HttpCounts HttpCounters::snapshot() const {
  HttpCounts out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = by_status_[i].load(std::memory_order_relaxed);
  return out;
}

std::string metrics_text(const EngineStats& s, const HttpCounts& http) {
  std::string out;
  metric(out, "num_requests_running", "gauge", "Requests in the running batch.", s.running);
  metric(out, "num_requests_waiting", "gauge", "Requests waiting to be scheduled.", s.waiting);
  double usage =
      s.kv_blocks_total > 0 ? static_cast<double>(s.kv_blocks_active) / s.kv_blocks_total : 0.0;
  metric(out, "kv_cache_usage_perc", "gauge",
         "Fraction of KV-cache blocks held by requests (1 = full).", usage);
  header(out, "kv_cache_blocks", "gauge", "KV-cache blocks by state.");
  for (auto [state, n] :
       {std::pair{"active", s.kv_blocks_active}, std::pair{"cached", s.kv_blocks_cached},
        std::pair{"free", s.kv_blocks_free}, std::pair{"total", s.kv_blocks_total}}) {
    out += std::string(kPrefix) + "kv_cache_blocks{state=\"" + state + "\"} " + std::to_string(n) +
           "\n";
  }
  if (s.kv_sliding_blocks_total > 0) {
    header(out, "kv_cache_sliding_blocks", "gauge",
           "Sliding-window layers' own KV-cache pool, blocks by state.");
    for (auto [state, n] : {std::pair{"active", s.kv_sliding_blocks_active},
                            std::pair{"cached", s.kv_sliding_blocks_cached},
                            std::pair{"free", s.kv_sliding_blocks_free},
                            std::pair{"total", s.kv_sliding_blocks_total}}) {
      out += std::string(kPrefix) + "kv_cache_sliding_blocks{state=\"" + state + "\"} " +
             std::to_string(n) + "\n";
    }
  }
  if (s.state_slots_total > 0) {
    header(out, "state_slots", "gauge",
           "Recurrent-state slots of linear-attention layers (one per running sequence).");
    for (auto [state, n] : {std::pair{"in_use", s.state_slots_in_use},
                            std::pair{"free", s.state_slots_total - s.state_slots_in_use},
                            std::pair{"total", s.state_slots_total}}) {
      out +=
          std::string(kPrefix) + "state_slots{state=\"" + state + "\"} " + std::to_string(n) + "\n";
    }
    header(out, "state_snapshots", "gauge",
           "Recurrent-state snapshots kept for prefix hits (held: holding a prefix's state).");
    for (auto [state, n] :
         {std::pair{"held", s.state_snapshots_held}, std::pair{"total", s.state_snapshots_total}}) {
      out += std::string(kPrefix) + "state_snapshots{state=\"" + state + "\"} " +
             std::to_string(n) + "\n";
    }
  }
  metric(out, "kv_cache_integrity_ok", "gauge", "1 while the block manager's invariants hold.",
         s.kv_integrity_ok ? 1 : 0);
  metric(out, "prefix_cache_queries_total", "counter",
         "Prompt tokens looked up in the prefix cache.", s.prefix_cache_queries);
  metric(out, "prefix_cache_hits_total", "counter", "Prompt tokens found in the prefix cache.",
         s.prefix_cache_hits);
  metric(out, "prompt_tokens_total", "counter", "Prompt tokens processed.", s.prompt_tokens_total);
  metric(out, "generation_tokens_total", "counter", "Tokens generated.", s.generation_tokens_total);
  metric(out, "num_preemptions_total", "counter", "Sequences preempted for recompute.",
         s.preemptions_total);
  metric(out, "steps_total", "counter", "Engine steps run.", s.steps_total);
  const auto drafts = static_cast<double>(s.spec_decode_num_drafts);
  const auto draft_tokens = static_cast<double>(s.spec_decode_num_draft_tokens);
  const auto accepted = static_cast<double>(s.spec_decode_num_accepted_tokens);
  metric(out, "spec_decode_acceptance_rate", "gauge",
         "Speculative draft tokens accepted / verified (0 before any draft).",
         draft_tokens > 0 ? accepted / draft_tokens : 0.0);
  metric(out, "spec_decode_tokens_per_draft_step", "gauge",
         "Tokens a sequence step with a draft kept on average: 1 + accepted / drafts.",
         drafts > 0 ? 1.0 + accepted / drafts : 0.0);
  metric(out, "requests_finished_total", "counter", "Requests that finished.",
         s.requests_finished_total);
  metric(out, "requests_aborted_total", "counter", "Requests cancelled or aborted.",
         s.requests_aborted_total);
  metric(out, "requests_queue_timeout_total", "counter",
         "Requests refused because their queue deadline passed before they were scheduled.",
         s.requests_queue_timeout_total);
  metric(out, "requests_deadline_total", "counter",
         "Requests stopped at their total deadline (finish_reason length).",
         s.requests_deadline_total);
  metric(out, "kv_events_batches_total", "counter",
         "KV-cache event batches handed to the publisher (--kv-events-config).",
         s.kv_events_batches_total);
  metric(out, "kv_events_dropped_total", "counter",
         "KV-cache event batches the publisher dropped (its queue was full).",
         s.kv_events_dropped_total);
  metric(out, "max_seqs_in_step", "gauge", "The most sequences one engine step has run.",
         s.max_seqs_in_step);
  header(out, "step_phase_seconds_total", "counter",
         "Engine-thread wall time per step phase (schedule = scheduler and block bookkeeping).");
  for (auto [phase, secs] :
       {std::pair{"schedule", s.step_schedule_seconds},
        std::pair{"forward", s.step_forward_seconds}, std::pair{"sample", s.step_sample_seconds},
        std::pair{"emit", s.step_emit_seconds}}) {
    out += std::string(kPrefix) + "step_phase_seconds_total{phase=\"" + phase + "\"} " +
           std::to_string(secs) + "\n";
  }
  histogram(out, "time_to_first_token_seconds", "Time from arrival to the first token.",
            s.time_to_first_token);
  histogram(out, "inter_token_latency_seconds", "Time between consecutive tokens of a request.",
            s.inter_token_latency);
  histogram(out, "e2e_request_latency_seconds", "Time from arrival to the finish event.",
            s.e2e_latency);
  histogram(out, "request_queue_time_seconds", "Time a request waited before first scheduled.",
            s.queue_time);
  header(out, "http_responses_total", "counter", "HTTP responses by status code.");
  for (size_t i = 0; i < http.size(); ++i) {
    if (http[i] == 0 && i != 400) continue;
    out += std::string(kPrefix) + "http_responses_total{code=\"" + std::to_string(i + 100) +
           "\"} " + std::to_string(http[i]) + "\n";
  }
  header(out, "kernel_info", "gauge",
         "The CPU kernels in use: instruction set, linear kernel mode and per-shape plan.");
  std::string summary;
  for (char ch : s.kernels) {
    if (ch == '"' || ch == '\\') summary += '\\';
    summary += ch == '\n' ? ' ' : ch;
  }
  out += std::string(kPrefix) + "kernel_info{summary=\"" + summary + "\"} 1\n";
  return out;
}

}  // namespace ps
