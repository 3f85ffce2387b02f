#include "scheduler/sequence.h"

#include <stdexcept>
#include <string>

namespace ps {

namespace {

[[noreturn]] void bad_transition(SeqId id, const char* what, SeqStatus from) {
  throw std::logic_error("Sequence " + std::to_string(id) + ": cannot " + what + " from " +
                         to_string(from));
}

}  // namespace

const char* to_string(SeqStatus status) {
  switch (status) {
    case SeqStatus::kWaiting:
      return "waiting";
    case SeqStatus::kRunning:
      return "running";
    case SeqStatus::kFinished:
      return "finished";
  }
  return "?";
}

Sequence::Sequence(SeqId id, std::vector<int32_t> prompt_ids, const BlockManager* blocks)
    : id_(id),
      tokens_(std::move(prompt_ids)),
      num_prompt_tokens_(static_cast<int32_t>(tokens_.size())),
      blocks_(blocks) {
  if (tokens_.empty()) {
    throw std::invalid_argument("Sequence " + std::to_string(id) + ": empty prompt");
  }
}

// waiting -> running. Pre: nothing computed. Post: the cached prefix counts as computed.
void Sequence::admit(int32_t num_cached_tokens) {
  if (status_ != SeqStatus::kWaiting) bad_transition(id_, "admit", status_);
  if (num_computed_ != 0 || num_cached_tokens < 0 || num_cached_tokens >= num_tokens()) {
    throw std::logic_error("Sequence " + std::to_string(id_) + ": admitted with " +
                           std::to_string(num_cached_tokens) + " cached of " +
                           std::to_string(num_tokens()) + " tokens");
  }
  status_ = SeqStatus::kRunning;
  num_computed_ = num_cached_tokens;
  if (!admitted_before_) {
    admitted_before_ = true;
    num_cached_prompt_tokens_ = num_cached_tokens;
  }
}

// running -> waiting. Post: nothing computed; prompt and output so far are recomputed later.
void Sequence::preempt() {
  if (status_ != SeqStatus::kRunning) bad_transition(id_, "preempt", status_);
  status_ = SeqStatus::kWaiting;
  num_computed_ = 0;
  scheduled_tokens_ = 0;
  draft_.clear();
  ++num_preemptions_;
}

// waiting|running -> finished.
void Sequence::finish() {
  if (status_ == SeqStatus::kFinished) bad_transition(id_, "finish", status_);
  status_ = SeqStatus::kFinished;
  scheduled_tokens_ = 0;
  draft_.clear();
}

void Sequence::advance(int32_t num_tokens) {
  if (status_ != SeqStatus::kRunning) bad_transition(id_, "advance", status_);
  if (num_tokens <= 0 || num_computed_ + num_tokens > this->num_tokens()) {
    throw std::logic_error("Sequence " + std::to_string(id_) + ": cannot compute " +
                           std::to_string(num_tokens) + " more tokens with " +
                           std::to_string(num_uncomputed_tokens()) + " left");
  }
  num_computed_ += num_tokens;
}

// Pre: every token is computed, so the new one is the only uncomputed token.
void Sequence::append(int32_t token) {
  if (status_ != SeqStatus::kRunning) bad_transition(id_, "append", status_);
  if (num_computed_ != num_tokens()) {
    throw std::logic_error("Sequence " + std::to_string(id_) +
                           ": sampled a token before its prompt was computed");
  }
  tokens_.push_back(token);
}

// Pre: the tokens before the draft are computed (advance() ran for them). Each accepted draft
// token equals the token verified at its place, so its K/V, written this step, stays; the K/V
// past the accepted ones is garbage that later steps overwrite (its blocks are rolled back).
void Sequence::accept(std::span<const int32_t> verified) {
  if (status_ != SeqStatus::kRunning) bad_transition(id_, "accept", status_);
  if (verified.empty() || verified.size() > draft_.size() + 1) {
    throw std::logic_error("Sequence " + std::to_string(id_) + ": " +
                           std::to_string(verified.size()) + " verified tokens for a draft of " +
                           std::to_string(draft_.size()));
  }
  for (size_t j = 0; j < verified.size(); ++j) {
    if (j > 0) {
      if (verified[j - 1] != draft_[j - 1]) {
        throw std::logic_error("Sequence " + std::to_string(id_) +
                               ": a verified token after a rejected draft token");
      }
      advance(1);  // the accepted draft token's K/V
    }
    append(verified[j]);
  }
  draft_.clear();
}

}  // namespace ps
