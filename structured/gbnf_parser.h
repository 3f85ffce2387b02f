#pragma once
#include <cstddef>
#include <string_view>

#include "structured/grammar.h"

namespace ps {

struct GbnfLimits {
  size_t max_rules = 20000;      // rules after rewriting sugar (each group, `*`, `+`, ... adds one)
  size_t max_elements = 400000;  // terminals + rule references, after `{m,n}` is expanded
  size_t max_text_bytes = 1 << 20;
};

// Parses llama.cpp's GBNF text form (see structured_api.md) into the IR. The rule named `root`
// is the start. Left recursion (a rule that can reach itself without consuming a character) is
// rejected: the matcher is a pushdown automaton, and a left-recursive rule would push forever.
// Errors throw StructuredError whose message starts "grammar line L:C:" (or names the rule, or
// the limit exceeded); its param is "grammar".
Grammar parse_gbnf(std::string_view text, const GbnfLimits& limits = {});

}  // namespace ps
