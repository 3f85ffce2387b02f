#pragma once
#include <cstdint>
#include <vector>

#include "structured/flat_grammar.h"
#include "structured/stack_arena.h"

namespace ps {

// One live stack: its top node is always at a kClass element; `partial` is the UTF-8 decode
// state inside that element's code point (0 between code points).
struct StackTop {
  uint32_t node = 0;
  uint32_t partial = 0;
};

// A set of stacks after some bytes. `can_end`: the root rule matched exactly here.
// `hit_context`: some path popped into StackArena::kContext (cache building only).
struct MatchState {
  std::vector<StackTop> stacks;
  bool can_end = false;
  bool hit_context = false;
  ByteSet context_follow;  // with hit_context: the bytes that may come next on those paths
  bool pruned = false;     // parses were dropped at FlatGrammar::max_stacks
  bool alive() const { return !stacks.empty() || can_end || hit_context; }
  void clear() {
    stacks.clear();
    can_end = false;
    hit_context = false;
    context_follow = ByteSet{};
    pruned = false;
  }
};

// The pushdown steps over a FlatGrammar: expansion of rule references and rule ends until every
// stack's top is a terminal, and one byte of input against every stack. Left recursion was
// rejected at parse time, so expansion always terminates.
class StackStepper {
 public:
  StackStepper(const FlatGrammar& g, StackArena& arena) : g_(g), arena_(arena) {}

  // Adds to `out` what the frame `node` (or a sentinel) expands to.
  void expand(uint32_t node, MatchState& out);
  // The stacks of the root's start.
  void start(MatchState& out);
  // `out` = `in` after one byte; out.hit_context: a path popped into kContext on this byte.
  void advance(const MatchState& in, uint8_t byte, MatchState& out);

 private:
  bool first_visit(uint32_t node);
  void new_epoch();

  const FlatGrammar& g_;
  StackArena& arena_;
  std::vector<uint32_t> seen_;  // node -> epoch of its last visit
  uint32_t epoch_ = 0;
  std::vector<uint32_t> work_;
};

}  // namespace ps
