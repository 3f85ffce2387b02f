#include "structured/grammar_checks.h"

#include <string>

#include "structured/constraint_spec.h"

namespace ps {

std::vector<bool> nullable_rules(const Grammar& g) {
  std::vector<bool> nullable(g.rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < g.rules.size(); ++r) {
      if (nullable[r]) continue;
      for (const auto& alt : g.rules[r].alternatives) {
        bool all = true;
        for (const auto& e : alt) {
          if (e.kind == GrammarElement::Kind::kClass || !nullable[e.index]) {
            all = false;
            break;
          }
        }
        if (all) {
          nullable[r] = true;
          changed = true;
          break;
        }
      }
    }
  }
  return nullable;
}

void reject_left_recursion(const Grammar& g) {
  std::vector<bool> nullable = nullable_rules(g);
  // Edge r -> s: s is referenced in r after only nullable elements (a "left corner").
  std::vector<std::vector<uint32_t>> left(g.rules.size());
  for (size_t r = 0; r < g.rules.size(); ++r) {
    for (const auto& alt : g.rules[r].alternatives) {
      for (const auto& e : alt) {
        if (e.kind == GrammarElement::Kind::kClass) break;
        left[r].push_back(e.index);
        if (!nullable[e.index]) break;
      }
    }
  }
  // Iterative DFS with colors; a grey target is a cycle.
  enum : char { kWhite, kGrey, kBlack };
  std::vector<char> color(g.rules.size(), kWhite);
  for (size_t start = 0; start < g.rules.size(); ++start) {
    if (color[start] != kWhite) continue;
    std::vector<std::pair<uint32_t, size_t>> stack{{static_cast<uint32_t>(start), 0}};
    color[start] = kGrey;
    while (!stack.empty()) {
      auto& [r, next] = stack.back();
      if (next == left[r].size()) {
        color[r] = kBlack;
        stack.pop_back();
        continue;
      }
      uint32_t s = left[r][next++];
      if (color[s] == kGrey) {
        std::string cycle = g.rules[s].name;
        std::vector<std::string> path;
        for (auto it = stack.rbegin(); it != stack.rend() && it->first != s; ++it) {
          path.push_back(g.rules[it->first].name);
        }
        for (auto it = path.rbegin(); it != path.rend(); ++it) cycle += " -> " + *it;
        cycle += " -> " + g.rules[s].name;
        throw StructuredError("grammar rule '" + g.rules[s].name + "' (line " + g.rules[s].origin +
                                  ") is left-recursive: " + cycle +
                                  " without consuming a character; write it with repetition "
                                  "(e.g. x ::= y (\"op\" y)*) instead",
                              "grammar");
      }
      if (color[s] == kWhite) {
        color[s] = kGrey;
        stack.push_back({s, 0});
      }
    }
  }
}

}  // namespace ps
