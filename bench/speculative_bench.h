#pragma once
// `bench offline --speculative ngram ...`: the same workload run again with speculation off in
// the same process, so the speed-up of speculative decoding is a ratio of one run (issue #21).
#include <nlohmann/json.hpp>

#include "bench/offline_bench.h"

namespace ps {

// `on_continuous` (and `on_single`, when not null) ran with config.speculative on. Runs the
// same modes with it off right after, then `rounds - 1` more on/off pairs, each pair back to
// back so both halves see the same load on a shared machine; prints every pair's ratios and
// their median, acceptance rate and tokens per step, and returns them as JSON.
nlohmann::json compare_speculative(const LoadedModel& model,
                                   std::shared_ptr<const Tokenizer> tokenizer,
                                   const EngineConfig& config, const OfflineWorkload& workload,
                                   const ModeResult& on_continuous, const ModeResult* on_single,
                                   int32_t rounds);

}  // namespace ps
