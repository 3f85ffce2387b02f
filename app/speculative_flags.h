#pragma once
// --speculative ngram|off --num-speculative-tokens K --ngram-max N --ngram-min M
// --speculative-disable-by-batch-size B: speculative decoding by n-gram prompt lookup (issue
// #21), named after vLLM's prompt-lookup options.
#include <set>
#include <string>

#include "app/flags.h"
#include "scheduler/speculative_config.h"

namespace ps {

// The valued flags above, for engine_command_flags.
std::set<std::string> speculative_flag_names();

// Off unless --speculative ngram. Throws UsageError naming the flag on a bad value, and when
// a tuning flag comes without --speculative ngram (it would silently do nothing).
SpeculativeConfig speculative_config_from_flags(const Flags& flags);

}  // namespace ps
