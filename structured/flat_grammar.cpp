#include "structured/flat_grammar.h"

#include <algorithm>

#include "structured/grammar_checks.h"

namespace ps {

void FlatGrammar::compute_follow_sets(const std::vector<bool>& nullable) {
  const size_t rules = alternative_starts.size();
  std::vector<ByteSet> first(rules);
  // FIRST of the elements from p to its alternative's end; true when they can all be empty.
  auto first_of_suffix = [&](uint32_t p, ByteSet& out) {
    for (;; ++p) {
      const FlatElement& e = elements[p];
      if (e.kind == FlatElement::Kind::kEnd) return true;
      if (e.kind == FlatElement::Kind::kClass) {
        for (int b = 0; b < 256; ++b) {
          if (classes[e.index].can_start_with(static_cast<uint8_t>(b))) {
            out.set(static_cast<uint8_t>(b));
          }
        }
        return false;
      }
      out.merge(first[e.index]);
      if (!nullable[e.index]) return false;
    }
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t r = 0; r < rules; ++r) {
      for (uint32_t start : alternative_starts[r]) {
        ByteSet f = first[r];
        first_of_suffix(start, f);
        grew |= first[r].merge(f);
      }
    }
  }
  // Which rule each position belongs to, for "a use at the end of rule s is followed by
  // whatever follows s".
  std::vector<uint32_t> rule_of(elements.size());
  for (size_t r = 0; r < rules; ++r) {
    for (uint32_t p : alternative_starts[r]) {
      for (uint32_t q = p;; ++q) {
        rule_of[q] = static_cast<uint32_t>(r);
        if (elements[q].kind == FlatElement::Kind::kEnd) break;
      }
    }
  }
  follow.assign(rules, ByteSet{});
  for (bool grew = true; grew;) {
    grew = false;
    for (uint32_t p = 0; p < elements.size(); ++p) {
      if (elements[p].kind != FlatElement::Kind::kRuleRef) continue;
      ByteSet f;
      bool open_end = first_of_suffix(p + 1, f);
      if (open_end) f.merge(follow[rule_of[p]]);
      grew |= follow[elements[p].index].merge(f);
    }
  }
}

void FlatGrammar::compute_static_returns() {
  const size_t rules = alternative_starts.size();
  std::vector<std::vector<uint32_t>> sites(rules);  // positions that reference each rule
  for (uint32_t p = 0; p < elements.size(); ++p) {
    if (elements[p].kind == FlatElement::Kind::kRuleRef) sites[elements[p].index].push_back(p);
  }
  static_return.assign(rules, kNoStaticReturn);
  std::vector<uint32_t> seen(rules, 0xFFFFFFFFu), work;
  for (uint32_t r = 0; r < rules; ++r) {
    // Follow tail calls (a use whose next element is its rule's end returns where that rule
    // returns) until the non-tail continuations are known; more than one, or the root's
    // outside caller, means no static return.
    uint32_t found = kNoStaticReturn;
    bool many = false;
    work.assign(1, r);
    seen[r] = r;
    while (!work.empty() && !many) {
      uint32_t s = work.back();
      work.pop_back();
      if (s == root) {
        many = true;
        break;
      }
      for (uint32_t p : sites[s]) {
        const FlatElement& next = elements[p + 1];
        if (next.kind == FlatElement::Kind::kEnd) {
          if (seen[next.index] != r) {
            seen[next.index] = r;
            work.push_back(next.index);
          }
        } else if (found == kNoStaticReturn || found == p + 1) {
          found = p + 1;
        } else {
          many = true;
          break;
        }
      }
    }
    if (!many) static_return[r] = found;
  }
}

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
      f.elements.push_back({FlatElement::Kind::kEnd, static_cast<uint32_t>(r)});
    }
  }
  f.compute_static_returns();
  f.compute_follow_sets(nullable_rules(g));
  return f;
}

}  // namespace ps
