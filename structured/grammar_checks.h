#pragma once
#include <vector>

#include "structured/grammar.h"

namespace ps {

// rules[i] can match the empty string.
std::vector<bool> nullable_rules(const Grammar& g);

// Throws StructuredError naming the cycle when a rule can reach itself without consuming a
// character (A ::= A "x", or A ::= B A with B nullable, or ("x"?)*): a pushdown matcher
// would expand it forever. GBNF writers express such rules with repetition instead.
void reject_left_recursion(const Grammar& g);

}  // namespace ps
