#pragma once
#include <cstdint>
#include <vector>

#include "structured/codepoint_class.h"
#include "structured/grammar.h"

namespace ps {

// The IR laid out for the matcher: every alternative of every rule is a run of elements in one
// array, closed by kEnd, so "the element after this one" is position + 1 and a matcher stack
// frame is one position.
struct FlatElement {
  enum class Kind : uint8_t { kClass, kRuleRef, kEnd };
  Kind kind = Kind::kEnd;
  uint32_t index = 0;  // class index (kClass) or rule index (kRuleRef)
};

struct FlatGrammar {
  std::vector<FlatElement> elements;
  std::vector<std::vector<uint32_t>> alternative_starts;  // per rule: positions
  std::vector<CodepointClass> classes;
  uint32_t root = 0;
  // A set of stacks is a set of parses: a grammar ambiguous in nested ways (r ::= "a" r?
  // repeated) has exponentially many. After each accepted token the matcher keeps the first
  // max_stacks (what it then allows is still valid; it may allow less) and says so
  // (MatchState::pruned). Pruning only between tokens keeps the mask (one walk per stack)
  // equal to what accept_token does; inside one token only a hard cap of 16x applies, a
  // safety net for pathological grammars, where the two may then differ.
  uint32_t max_stacks = 256;
  uint32_t max_stacks_within_token() const { return max_stacks * 16; }

  static FlatGrammar from(const Grammar& g);
};

}  // namespace ps
