#pragma once
#include <array>
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
  uint32_t index = 0;  // class index (kClass), rule referenced (kRuleRef), own rule (kEnd)
};

// A set of byte values.
struct ByteSet {
  std::array<uint64_t, 4> bits{};
  bool test(uint8_t b) const { return bits[b / 64] >> (b % 64) & 1; }
  void set(uint8_t b) { bits[b / 64] |= uint64_t{1} << (b % 64); }
  bool merge(const ByteSet& o) {  // true when it grew
    bool grew = false;
    for (int i = 0; i < 4; ++i) {
      uint64_t n = bits[i] | o.bits[i];
      grew |= n != bits[i];
      bits[i] = n;
    }
    return grew;
  }
};

struct FlatGrammar {
  std::vector<FlatElement> elements;
  std::vector<std::vector<uint32_t>> alternative_starts;  // per rule: positions
  std::vector<CodepointClass> classes;
  uint32_t root = 0;
  // Per rule: where the matcher always continues after the rule ends (following tail calls),
  // when that is one place for every use of the rule; kNoStaticReturn otherwise. The cache
  // probes (which see only a stack's top frame) read on through such returns instead of
  // calling the outcome context-dependent: `[^"]` in a string's `( ... )*` ends its group
  // rule after one character, but where it returns to is fixed.
  static constexpr uint32_t kNoStaticReturn = 0xFFFFFFFFu;
  std::vector<uint32_t> static_return;
  // Per rule: the bytes that can come right after it ends, in any use (FOLLOW over bytes).
  // A probe that reaches a rule's end with bytes left calls the token uncertain only when its
  // next byte is one of these; any other byte can never match, whatever the stack.
  std::vector<ByteSet> follow;
  // A set of stacks is a set of parses: a grammar ambiguous in nested ways (r ::= "a" r?
  // repeated) has exponentially many. After each accepted token the matcher keeps the first
  // max_stacks (what it then allows is still valid; it may allow less) and says so
  // (MatchState::pruned). Pruning only between tokens keeps the mask (one walk per stack)
  // equal to what accept_token does; inside one token only a hard cap of 16x applies, a
  // safety net for pathological grammars, where the two may then differ.
  uint32_t max_stacks = 256;
  uint32_t max_stacks_within_token() const { return max_stacks * 16; }

  static FlatGrammar from(const Grammar& g);

 private:
  void compute_static_returns();
  void compute_follow_sets(const std::vector<bool>& nullable);
};

}  // namespace ps
