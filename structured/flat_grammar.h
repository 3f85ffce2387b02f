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

  static FlatGrammar from(const Grammar& g);
};

}  // namespace ps
