#include "structured/grammar_matcher.h"

#include <cstring>
#include <stdexcept>

namespace ps {
namespace {

inline void set_bit(uint32_t* words, int32_t t) {
  words[t / 32] |= uint32_t{1} << (t % 32);
}
inline void clear_bit(uint32_t* words, int32_t t) {
  words[t / 32] &= ~(uint32_t{1} << (t % 32));
}
inline bool test_bit(const uint32_t* words, int32_t t) {
  return words[t / 32] >> (t % 32) & 1;
}

}  // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar)
    : g_(std::move(grammar)),
      stepper_(g_ ? g_->grammar : throw std::invalid_argument("GrammarMatcher: no grammar"),
               arena_) {
  levels_.resize(g_->vocab->max_token_bytes() + 2);
  reset();
}

GrammarMatcher::GrammarMatcher(const GrammarMatcher& o)
    : g_(o.g_),
      arena_(o.arena_),
      stepper_(g_->grammar, arena_),
      state_(o.state_),
      lazy_(o.lazy_),
      triggered_(o.triggered_),
      trigger_state_(o.trigger_state_),
      ended_by_eos_(o.ended_by_eos_) {
  levels_.resize(o.levels_.size());
}

GrammarMatcher& GrammarMatcher::operator=(const GrammarMatcher& o) {
  if (this == &o) return *this;
  if (&o.g_->grammar != &g_->grammar) {
    throw std::invalid_argument("GrammarMatcher: assignment across grammars");
  }
  g_ = o.g_;
  arena_ = o.arena_;
  state_ = o.state_;
  lazy_ = o.lazy_;
  triggered_ = o.triggered_;
  trigger_state_ = o.trigger_state_;
  ended_by_eos_ = o.ended_by_eos_;
  return *this;
}

void GrammarMatcher::reset() {
  arena_ = StackArena();
  stepper_.start(state_);
  lazy_ = !g_->trigger.text.empty();
  triggered_ = false;
  trigger_state_ = 0;
  ended_by_eos_ = false;
}

bool GrammarMatcher::can_terminate() const {
  if (ended_by_eos_) return true;
  if (lazy_ && !triggered_) return true;  // free text may end anywhere
  return state_.can_end;
}

bool GrammarMatcher::is_finished() const {
  if (ended_by_eos_) return true;
  if (lazy_ && !triggered_) return false;
  return state_.stacks.empty() && state_.can_end;
}

bool GrammarMatcher::grammar_accepts(const MatchState& from, std::string_view bytes) {
  if (bytes.empty()) return true;
  MatchState a = from, b;
  for (char c : bytes) {
    stepper_.advance(a, static_cast<uint8_t>(c), b);
    if (b.stacks.empty() && !b.can_end) return false;
    std::swap(a, b);
  }
  return true;
}

bool GrammarMatcher::advance_grammar(std::string_view bytes) {
  size_t mark = arena_.checkpoint();
  MatchState a = state_, b;
  for (char c : bytes) {
    stepper_.advance(a, static_cast<uint8_t>(c), b);
    if (b.stacks.empty() && !b.can_end) {
      arena_.rollback(mark);
      return false;
    }
    std::swap(a, b);
  }
  if (a.stacks.size() > g_->grammar.max_stacks) {
    a.stacks.resize(g_->grammar.max_stacks);
    a.pruned = true;
  }
  state_ = std::move(a);
  return true;
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  if (ended_by_eos_) return bytes.empty();
  if (lazy_ && !triggered_) {
    uint32_t s = trigger_state_;
    for (size_t i = 0; i < bytes.size(); ++i) {
      s = g_->trigger.step(s, static_cast<uint8_t>(bytes[i]));
      if (s == g_->trigger.text.size()) {
        if (!advance_grammar(bytes.substr(i + 1))) return false;
        triggered_ = true;
        return true;
      }
    }
    trigger_state_ = s;
    return true;
  }
  return advance_grammar(bytes);
}

bool GrammarMatcher::accept_token(int32_t id) {
  const VocabIndex& v = *g_->vocab;
  if (id < 0 || id >= v.vocab_size() || ended_by_eos_) return false;
  if (v.is_eos(id)) {
    if (!can_terminate()) return false;
    ended_by_eos_ = true;
    return true;
  }
  if (lazy_ && !triggered_) return accept_bytes(v.bytes(id));
  if (g_->forbidden[id] || v.bytes(id).empty()) return false;
  return accept_bytes(v.bytes(id));
}

void GrammarMatcher::fill_next_token_bitmask(uint32_t* words) {
  const VocabIndex& v = *g_->vocab;
  size_t n = v.mask_words();
  if (ended_by_eos_) {
    std::memset(words, 0, n * 4);
    return;
  }
  if (lazy_ && !triggered_) {
    fill_lazy_mask(words);
    return;
  }
  std::memset(words, 0, n * 4);
  fill_grammar_mask(words);
  for (int32_t t : g_->forbidden_tokens) clear_bit(words, t);
  if (state_.can_end) {
    for (int32_t t : v.eos_ids()) set_bit(words, t);
  }
}

void GrammarMatcher::fill_grammar_mask(uint32_t* words) {
  size_t mark = arena_.checkpoint();
  size_t n = g_->vocab->mask_words();
  for (const StackTop& top : state_.stacks) {
    if (top.partial != 0) {
      walk_trie(top, words);  // mid code point: no cache entry, walk (continuation bytes only)
      continue;
    }
    const PositionMask& m = g_->masks[g_->mask_of_position[arena_.pos(top.node)]];
    if (!m.accepted_bits.empty()) {
      const uint32_t* a = m.accepted_bits.data();
      for (size_t w = 0; w < n; ++w) words[w] |= a[w];
    } else {
      for (int32_t t : m.accepted_list) set_bit(words, t);
    }
    if (!m.uncertain.empty()) check_uncertain(top, m.uncertain, words);
  }
  arena_.rollback(mark);
}

// The uncertain tokens of one stack, in byte order: each shares the states of its common
// prefix with the previous one, like a walk over the trie restricted to them.
void GrammarMatcher::check_uncertain(const StackTop& top, const std::vector<int32_t>& tokens,
                                     uint32_t* words) {
  const VocabIndex& v = *g_->vocab;
  levels_[0].clear();
  levels_[0].stacks.push_back(top);
  size_t valid = 0;  // levels_[0..valid] hold the states of the previous token's prefix
  std::string_view prev;
  for (int32_t t : tokens) {
    if (test_bit(words, t)) continue;  // another stack already allows it
    std::string_view b = v.bytes(t);
    size_t lcp = 0;
    while (lcp < b.size() && lcp < prev.size() && b[lcp] == prev[lcp]) ++lcp;
    size_t d = std::min(lcp, valid);
    bool ok = true;
    while (d < b.size()) {
      if (levels_[d].stacks.empty()) {
        ok = false;
        break;
      }
      stepper_.advance(levels_[d], static_cast<uint8_t>(b[d]), levels_[d + 1]);
      ++d;
    }
    valid = d;
    prev = b;
    if (ok && (!levels_[d].stacks.empty() || levels_[d].can_end)) set_bit(words, t);
  }
}

void GrammarMatcher::walk_trie(const StackTop& top, uint32_t* words) {
  const VocabIndex& v = *g_->vocab;
  levels_[0].clear();
  levels_[0].stacks.push_back(top);
  size_t n = v.trie_size();
  for (size_t i = 1; i < n;) {
    uint32_t d = v.trie_depth(i);
    MatchState& here = levels_[d];
    stepper_.advance(levels_[d - 1], v.trie_byte(i), here);
    if (!here.stacks.empty() || here.can_end) {
      for (const int32_t* t = v.trie_tokens_begin(i); t != v.trie_tokens_end(i); ++t) {
        set_bit(words, *t);
      }
    }
    i = here.stacks.empty() ? v.trie_subtree_end(i) : i + 1;
  }
}

// Free text until the trigger: every token, except one that completes the trigger and then
// continues with bytes the grammar rejects.
void GrammarMatcher::fill_lazy_mask(uint32_t* words) {
  const VocabIndex& v = *g_->vocab;
  size_t n = v.mask_words();
  std::memset(words, 0xFF, n * 4);
  int32_t tail = static_cast<int32_t>(n * 32) - v.vocab_size();
  if (tail > 0) words[n - 1] &= ~uint32_t{0} >> tail;
  size_t mark = arena_.checkpoint();
  for (const auto& c : g_->trigger.completions[trigger_state_]) {
    std::string_view rest = std::string_view(v.bytes(c.token)).substr(c.offset);
    if (!grammar_accepts(state_, rest)) clear_bit(words, c.token);
  }
  arena_.rollback(mark);
}

}  // namespace ps
