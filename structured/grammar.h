#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ps {

// The grammar IR: a context-free grammar over Unicode code points, with every GBNF sugar
// (groups, `* + ? {m,n}`, literals) already rewritten into plain rules. Terminals are code point
// classes; the matcher reads UTF-8 bytes and decodes on the fly.
struct CodepointRange {
  uint32_t lo = 0;  // inclusive
  uint32_t hi = 0;  // inclusive
};

struct GrammarElement {
  enum class Kind : uint8_t { kClass, kRuleRef };
  Kind kind = Kind::kClass;
  uint32_t index = 0;  // into Grammar::classes or Grammar::rules
};

using GrammarSequence = std::vector<GrammarElement>;

struct GrammarRule {
  std::string name;    // the user's name, or "<parent>_<n>" for rules the parser made
  std::string origin;  // "line:column" where it was written (for error messages)
  std::vector<GrammarSequence> alternatives;  // at least one; an empty one matches ""
};

struct Grammar {
  std::vector<GrammarRule> rules;
  // Sorted, disjoint, non-adjacent ranges of Unicode scalar values (never surrogates); a class
  // may be empty (matches nothing, e.g. `[^\x00-\U0010FFFF]`).
  std::vector<std::vector<CodepointRange>> classes;
  // The texts of the grammar's quoted literals, UTF-8: a special token whose text is inside
  // one of them may be generated (e.g. "<tool_call>"), no other special token may.
  std::vector<std::string> literals;
  uint32_t root = 0;
};

}  // namespace ps
