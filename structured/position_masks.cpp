// Precomputation of a CompiledGrammar: the per-position token masks (the context-independent
// cache), the forbidden special tokens and the lazy trigger's automaton.
#include <chrono>
#include <string>

#include "structured/constraint_spec.h"
#include "structured/grammar_compiler.h"
#include "structured/stack_stepper.h"

namespace ps {
namespace {

using Clock = std::chrono::steady_clock;

class PositionMaskBuilder {
 public:
  PositionMaskBuilder(const FlatGrammar& g, const VocabIndex& vocab, const CompileLimits& limits,
                      Clock::time_point deadline)
      : g_(g), vocab_(vocab), limits_(limits), deadline_(deadline), stepper_(g, arena_) {
    levels_.resize(vocab.max_token_bytes() + 2);
    context_on_path_.resize(vocab.max_token_bytes() + 2);
  }

  // Walks the vocabulary trie from the single frame `pos` over kContext.
  PositionMask build(uint32_t pos) {
    PositionMask m;
    std::vector<int32_t> accepted;
    size_t mark = arena_.checkpoint();
    levels_[0].clear();
    levels_[0].stacks.push_back({arena_.intern(pos, StackArena::kContext), 0});
    context_on_path_[0] = false;
    size_t n = vocab_.trie_size();
    size_t i = 1;
    while (i < n) {
      if ((++ticks_ & 0xFFF) == 0 && Clock::now() > deadline_) {
        throw StructuredError("grammar compile exceeded the time limit of " +
                                  seconds(limits_.max_compile_seconds) +
                                  " s (precomputing token masks); simplify the grammar",
                              "grammar");
      }
      uint32_t d = vocab_.trie_depth(i);
      const MatchState& parent = levels_[d - 1];
      MatchState& here = levels_[d];
      const uint8_t byte = vocab_.trie_byte(i);
      stepper_.advance(parent, byte, here);
      // Uncertain from here down: some path left the frame at an ancestor (the parent
      // included) and this byte is one that may follow the rule it ended.
      context_on_path_[d] =
          context_on_path_[d - 1] || (parent.hit_context && parent.context_follow.test(byte));
      const bool ok = !here.stacks.empty() || here.hit_context;
      for (const int32_t* t = vocab_.trie_tokens_begin(i); t != vocab_.trie_tokens_end(i); ++t) {
        if (ok) {
          accepted.push_back(*t);
        } else if (context_on_path_[d]) {
          m.uncertain.push_back(*t);
        }
      }
      if (!here.stacks.empty()) {
        ++i;
        continue;
      }
      // Nothing of this frame continues: the subtree is rejected, or left to the real stack
      // where a path left the frame (all of it, or the children whose byte may follow).
      const uint32_t end = vocab_.trie_subtree_end(i);
      for (size_t child = i + 1; child < end; child = vocab_.trie_subtree_end(child)) {
        if (context_on_path_[d] ||
            (here.hit_context && here.context_follow.test(vocab_.trie_byte(child)))) {
          add_subtree(child, m.uncertain);
        }
      }
      i = end;
    }
    arena_.rollback(mark);
    size_t words = vocab_.mask_words();
    if (accepted.size() * 32 > words * 4) {  // a bitmask is smaller than the list
      m.accepted_bits.assign(words, 0);
      for (int32_t t : accepted) m.accepted_bits[t / 32] |= uint32_t{1} << (t % 32);
    } else {
      m.accepted_list = std::move(accepted);
    }
    return m;
  }

 private:
  void add_subtree(size_t node, std::vector<int32_t>& out) const {
    // Preorder: the subtree's tokens are one run.
    const uint32_t last = vocab_.trie_subtree_end(node) - 1;
    out.insert(out.end(), vocab_.trie_tokens_begin(node), vocab_.trie_tokens_end(last));
  }

  static std::string seconds(double s) {
    std::string t = std::to_string(s);
    while (t.size() > 1 && t.back() == '0') t.pop_back();
    if (t.back() == '.') t.pop_back();
    return t;
  }

  const FlatGrammar& g_;
  const VocabIndex& vocab_;
  const CompileLimits& limits_;
  Clock::time_point deadline_;
  StackArena arena_;
  StackStepper stepper_;
  std::vector<MatchState> levels_;
  std::vector<bool> context_on_path_;
  size_t ticks_ = 0;
};

LazyTrigger build_trigger(const std::string& text, const VocabIndex& vocab) {
  LazyTrigger t;
  t.text = text;
  if (text.empty()) return t;
  t.failure.assign(text.size(), 0);
  for (size_t i = 1, k = 0; i < text.size(); ++i) {
    while (k > 0 && text[i] != text[k]) k = t.failure[k - 1];
    if (text[i] == text[k]) ++k;
    t.failure[i] = static_cast<uint32_t>(k);
  }
  t.completions.resize(text.size());
  for (uint32_t state = 0; state < text.size(); ++state) {
    for (int32_t id = 0; id < vocab.vocab_size(); ++id) {
      const std::string& b = vocab.bytes(id);
      uint32_t s = state;
      for (size_t j = 0; j < b.size(); ++j) {
        s = t.step(s, static_cast<uint8_t>(b[j]));
        if (s == text.size()) {
          t.completions[state].push_back({id, static_cast<uint32_t>(j + 1)});
          break;
        }
      }
    }
  }
  return t;
}

}  // namespace

uint32_t LazyTrigger::step(uint32_t state, uint8_t byte) const {
  if (state == text.size()) state = failure[state - 1];
  while (state > 0 && static_cast<uint8_t>(text[state]) != byte) state = failure[state - 1];
  if (static_cast<uint8_t>(text[state]) == byte) ++state;
  return state;
}

std::shared_ptr<const CompiledGrammar> compile_grammar(const Grammar& ir,
                                                       std::shared_ptr<const VocabIndex> vocab,
                                                       const CompileLimits& limits,
                                                       const std::string& trigger) {
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(limits.max_compile_seconds));
  if (trigger.size() > limits.max_trigger_bytes) {
    throw StructuredError("trigger is " + std::to_string(trigger.size()) +
                              " bytes, over the limit of " +
                              std::to_string(limits.max_trigger_bytes),
                          "trigger");
  }
  auto out = std::make_shared<CompiledGrammar>();
  out->grammar = FlatGrammar::from(ir);
  out->grammar.max_stacks = limits.max_stacks;
  out->vocab = vocab;
  const FlatGrammar& g = out->grammar;

  size_t positions = 0;
  for (const auto& e : g.elements) positions += e.kind == FlatElement::Kind::kClass;
  if (positions > limits.max_positions) {
    throw StructuredError("grammar has " + std::to_string(positions) +
                              " terminal positions, over the limit of " +
                              std::to_string(limits.max_positions),
                          "grammar");
  }
  PositionMaskBuilder builder(g, *vocab, limits, deadline);
  out->mask_of_position.assign(g.elements.size(), -1);
  for (uint32_t pos = 0; pos < g.elements.size(); ++pos) {
    if (g.elements[pos].kind != FlatElement::Kind::kClass) continue;
    out->mask_of_position[pos] = static_cast<int32_t>(out->masks.size());
    out->masks.push_back(builder.build(pos));
    const PositionMask& m = out->masks.back();
    out->memory_bytes +=
        m.accepted_bits.size() * 4 + m.accepted_list.size() * 4 + m.uncertain.size() * 4;
    if (out->memory_bytes > limits.max_mask_bytes) {
      throw StructuredError("grammar's precomputed token masks exceed the limit of " +
                                std::to_string(limits.max_mask_bytes) + " bytes",
                            "grammar");
    }
  }

  // Special tokens may appear only where the grammar spells out their text.
  out->forbidden.assign(vocab->vocab_size(), 0);
  for (int32_t id : vocab->special_ids()) {
    if (vocab->is_eos(id)) continue;
    const std::string& text = vocab->bytes(id);
    bool named = false;
    for (const auto& lit : ir.literals) {
      if (!text.empty() && lit.find(text) != std::string::npos) named = true;
    }
    if (!named) {
      out->forbidden_tokens.push_back(id);
      out->forbidden[id] = 1;
    }
  }
  out->trigger = build_trigger(trigger, *vocab);
  return out;
}

}  // namespace ps
