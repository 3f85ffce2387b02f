#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sampling/incremental_detokenizer.h"
#include "sampling/sampling_params.h"
#include "sampling/stop_string_matcher.h"

namespace ps {

enum class StopReason {
  kNone,
  kEos,
  kStopToken,
  kStopString,
  kMaxTokens,
  kContextLength,
  kGrammar,   // the request's grammar is complete: nothing but EOS could follow
  kDeadline,  // the request's total deadline passed (finish_by_deadline)
};

struct StopResult {
  std::string text;  // safe to emit now (valid UTF-8, never part of a matching stop string)
  StopReason reason = StopReason::kNone;
  std::string matched_stop;  // the stop string, when reason == kStopString
};

// Decides, token by token, what text a request may emit and when it ends.
//
// - EOS ids (unless ignore_eos) end it with kEos, stop_token_ids with kStopToken; that
//   token's own text is not emitted.
// - Stop strings are matched on the decoded text, across token boundaries. The text before
//   the first one to complete is emitted; the stop string and everything after never is.
//   Text that may still grow into a stop string is held back until it cannot.
// - Before min_tokens outputs, EOS and stop ids are suppressed at sampling (suppressed_ids())
//   and neither they nor stop strings end the request (the check is vLLM's: outputs so far,
//   this token included, < min_tokens).
// - max_tokens outputs end it with kMaxTokens; prompt_len + outputs reaching max_model_len
//   with kContextLength. EOS and stops on that same token take precedence.
// When a request ends, the result's text holds everything still held back (for EOS, stop
// ids and lengths, including a final U+FFFD for an unfinished character), so the
// concatenated texts of all results are the whole response, streamed or not.
class StopChecker {
 public:
  StopChecker(const SamplingParams& p, std::vector<int32_t> eos_ids, int32_t prompt_len,
              int32_t max_model_len, std::shared_ptr<const std::vector<std::string>> token_bytes,
              std::shared_ptr<const std::vector<bool>> is_special);

  // Feeds one generated token. After a result with reason != kNone, further calls return that
  // reason again with no text.
  StopResult append(int32_t token);

  // EOS (unless ignore_eos) + stop_token_ids while num_output_tokens() < min_tokens; empty
  // afterwards.
  const std::vector<int32_t>& suppressed_ids() const;
  // Ends the request with kGrammar (after the last append), returning the text held back.
  // Called when a constrained request's grammar allows nothing but EOS: min_tokens cannot
  // apply to output the grammar has closed.
  StopResult finish_by_grammar();
  // Ends the request with kDeadline between tokens, returning the text held back (a partial
  // stop string is emitted: it can no longer complete).
  StopResult finish_by_deadline();
  int32_t num_output_tokens() const { return num_output_; }
  StopReason reason() const { return reason_; }

 private:
  StopResult finish(StopReason reason, std::string text, std::string matched = {});
  std::string take_all_text();

  std::vector<int32_t> eos_ids_;
  std::vector<int32_t> stop_token_ids_;
  std::vector<int32_t> suppressed_;
  int32_t max_tokens_;
  int32_t min_tokens_;
  int32_t prompt_len_;
  int32_t max_model_len_;
  IncrementalDetokenizer detok_;
  StopStringMatcher matcher_;
  std::string held_;  // decoded but not emitted: it may be the start of a stop string
  int32_t num_output_ = 0;
  StopReason reason_ = StopReason::kNone;
};

}  // namespace ps
