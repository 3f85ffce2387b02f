#include "structured/stack_stepper.h"

namespace ps {

void StackStepper::new_epoch() {
  if (++epoch_ == 0) {  // wrapped: forget every mark
    std::fill(seen_.begin(), seen_.end(), 0);
    epoch_ = 1;
  }
}

bool StackStepper::first_visit(uint32_t node) {
  if (node >= seen_.size()) seen_.resize(arena_.size() * 2 + 16, 0);
  if (seen_[node] == epoch_) return false;
  seen_[node] = epoch_;
  return true;
}

void StackStepper::expand(uint32_t node, MatchState& out) {
  work_.clear();
  work_.push_back(node);
  while (!work_.empty()) {
    uint32_t n = work_.back();
    work_.pop_back();
    if (n == StackArena::kAccept) {
      out.can_end = true;
      continue;
    }
    if (n == StackArena::kContext) {
      out.hit_context = true;
      continue;
    }
    if (!first_visit(n)) continue;
    uint32_t pos = arena_.pos(n);
    const FlatElement& e = g_.elements[pos];
    switch (e.kind) {
      case FlatElement::Kind::kClass:
        out.stacks.push_back({n, 0});
        break;
      case FlatElement::Kind::kEnd: {
        uint32_t parent = arena_.parent(n);
        uint32_t fixed = g_.static_return[e.index];
        if (parent == StackArena::kContext && fixed != FlatGrammar::kNoStaticReturn) {
          // A cache probe at the end of its frame: the caller is known all the same.
          work_.push_back(arena_.intern(fixed, StackArena::kContext));
        } else if (parent == StackArena::kContext) {
          out.hit_context = true;
          out.context_follow.merge(g_.follow[e.index]);
        } else {
          work_.push_back(parent);  // rule done: return to the caller's next element
        }
        break;
      }
      case FlatElement::Kind::kRuleRef: {
        // A tail call (the reference is its alternative's last element) returns straight to
        // the caller's caller: without this, `x*` (R ::= x R) would grow the stack by one
        // frame per repetition, and leaving a long string would pop them one by one.
        uint32_t ret = g_.elements[pos + 1].kind == FlatElement::Kind::kEnd
                           ? arena_.parent(n)
                           : arena_.intern(pos + 1, arena_.parent(n));
        const auto& starts = g_.alternative_starts[e.index];
        for (auto it = starts.rbegin(); it != starts.rend(); ++it) {
          work_.push_back(arena_.intern(*it, ret));
        }
        break;
      }
    }
  }
}

void StackStepper::start(MatchState& out) {
  new_epoch();
  out.clear();
  for (uint32_t s : g_.alternative_starts[g_.root])
    expand(arena_.intern(s, StackArena::kAccept), out);
}

void StackStepper::advance(const MatchState& in, uint8_t byte, MatchState& out) {
  new_epoch();
  out.clear();
  for (const StackTop& s : in.stacks) {
    uint32_t pos = arena_.pos(s.node);
    const CodepointClass& c = g_.classes[g_.elements[pos].index];
    uint32_t partial = s.partial;
    switch (c.step(partial, byte)) {
      case ClassStep::kReject:
        break;
      case ClassStep::kMore:
        out.stacks.push_back({s.node, partial});
        break;
      case ClassStep::kDone:
        expand(arena_.intern(pos + 1, arena_.parent(s.node)), out);
        break;
    }
  }
  out.pruned = in.pruned;
  if (out.stacks.size() > g_.max_stacks_within_token()) {
    out.stacks.resize(g_.max_stacks_within_token());
    out.pruned = true;
  }
}

}  // namespace ps
