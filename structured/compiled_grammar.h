#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "structured/flat_grammar.h"
#include "structured/vocab_index.h"

namespace ps {

// Per terminal position, what a token does when the stack's top is that position, judged
// from the top frame alone (xgrammar's adaptive token mask cache): accepted whatever lies
// below, rejected whatever lies below, or uncertain (it reaches the end of the frame's rule
// with bytes left, so the caller's frames decide). Only uncertain tokens are checked against
// the real stack at run time.
struct PositionMask {
  // Accepted tokens: a bitmask over the vocabulary when there are many, else a list.
  std::vector<uint32_t> accepted_bits;
  std::vector<int32_t> accepted_list;
  std::vector<int32_t> uncertain;  // in trie (byte) order, so checks share prefixes
};

// The lazy trigger, as a KMP automaton over the output bytes, with, for each automaton state
// k, the tokens that complete the trigger from k and where in the token the grammar starts.
struct LazyTrigger {
  std::string text;
  std::vector<uint32_t> failure;  // KMP failure function
  struct Completion {
    int32_t token;
    uint32_t offset;  // bytes of the token after the trigger's end start here
  };
  std::vector<std::vector<Completion>> completions;  // [state]

  uint32_t step(uint32_t state, uint8_t byte) const;
};

// Everything a GrammarMatcher needs; immutable, shared by every request that uses it.
struct CompiledGrammar {
  FlatGrammar grammar;
  std::shared_ptr<const VocabIndex> vocab;
  std::vector<int32_t> mask_of_position;  // element position -> index into masks (-1: none)
  std::vector<PositionMask> masks;
  std::vector<int32_t> forbidden_tokens;  // special tokens the grammar does not name
  std::vector<uint8_t> forbidden;         // [token] 1 when forbidden
  LazyTrigger trigger;                    // text empty: not lazy
  size_t memory_bytes = 0;                // what the masks hold (for limits and metrics)
};

}  // namespace ps
