#pragma once
#include <cstdint>
#include <memory>
#include <string_view>

#include "structured/compiled_grammar.h"
#include "structured/stack_arena.h"
#include "structured/stack_stepper.h"

namespace ps {

// The per-sequence state of a grammar: the set of pushdown stacks after the output so far.
// Not thread-safe; one per sequence (n > 1: one per choice). Copyable (a copy is independent).
class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar);
  GrammarMatcher(const GrammarMatcher& other);
  GrammarMatcher& operator=(const GrammarMatcher& other);

  // words: vocab_size / 32 rounded up; bit t of word t/32 set = token t allowed next.
  void fill_next_token_bitmask(uint32_t* words);
  // Advances by a token; false (state unchanged) when the grammar does not allow it.
  bool accept_token(int32_t id);
  // Advances by raw bytes; false (state unchanged) when not allowed.
  bool accept_bytes(std::string_view bytes);
  // The output so far is a complete match (EOS may come next).
  bool can_terminate() const;
  // Nothing but EOS can follow (or EOS was accepted): the request is done.
  bool is_finished() const;
  // Back to the state before any output.
  void reset();

  // False while a lazy grammar waits for its trigger.
  // Some parses were dropped (the grammar is ambiguous past CompileLimits::max_stacks).
  bool pruned() const { return state_.pruned; }
  // Parses followed at once (the size of the stack set), and whether one is inside a code point.
  size_t num_stacks() const { return state_.stacks.size(); }
  bool mid_codepoint() const {
    for (const auto& s : state_.stacks) {
      if (s.partial) return true;
    }
    return false;
  }
  bool triggered() const { return !lazy_ || triggered_; }
  const CompiledGrammar& grammar() const { return *g_; }
  size_t mask_words() const { return g_->vocab->mask_words(); }

 private:
  bool advance_grammar(std::string_view bytes);
  bool grammar_accepts(const MatchState& from, std::string_view bytes);
  void fill_grammar_mask(uint32_t* words);
  void fill_lazy_mask(uint32_t* words);
  void check_uncertain(const StackTop& top, const std::vector<int32_t>& tokens, uint32_t* words);
  void walk_trie(const StackTop& top, uint32_t* words);

  std::shared_ptr<const CompiledGrammar> g_;
  StackArena arena_;
  StackStepper stepper_;
  MatchState state_;
  bool lazy_ = false;
  bool triggered_ = false;
  uint32_t trigger_state_ = 0;
  bool ended_by_eos_ = false;
  // Scratch for mask building, one state per byte depth.
  std::vector<MatchState> levels_;
};

}  // namespace ps
