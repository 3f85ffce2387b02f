#include "structured/flat_grammar.h"

namespace ps {

FlatGrammar FlatGrammar::from(const Grammar& g) {
  FlatGrammar f;
  f.root = g.root;
  f.classes.reserve(g.classes.size());
  for (const auto& c : g.classes) f.classes.emplace_back(c);
  f.alternative_starts.resize(g.rules.size());
  for (size_t r = 0; r < g.rules.size(); ++r) {
    for (const auto& alt : g.rules[r].alternatives) {
      f.alternative_starts[r].push_back(static_cast<uint32_t>(f.elements.size()));
      for (const auto& e : alt) {
        f.elements.push_back({e.kind == GrammarElement::Kind::kClass ? FlatElement::Kind::kClass
                                                                     : FlatElement::Kind::kRuleRef,
                              e.index});
      }
      f.elements.push_back({FlatElement::Kind::kEnd, 0});
    }
  }
  return f;
}

}  // namespace ps
