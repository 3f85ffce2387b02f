#pragma once
#include <memory>
#include <string>
#include <vector>

#include "structured/grammar_compiler.h"
#include "structured/grammar_matcher.h"

namespace ps::test {

// A small vocabulary: every single byte (ids 0..255), then multi-byte pieces, then EOS.
inline std::shared_ptr<const std::vector<std::string>> byte_vocab(
    const std::vector<std::string>& extra = {}) {
  auto v = std::make_shared<std::vector<std::string>>();
  for (int b = 0; b < 256; ++b) v->push_back(std::string(1, static_cast<char>(b)));
  for (const auto& e : extra) v->push_back(e);
  v->push_back("</s>");  // EOS, last
  return v;
}

inline int32_t eos_of(const std::vector<std::string>& v) {
  return static_cast<int32_t>(v.size() - 1);
}

// A compiled GBNF over the byte vocabulary.
inline std::shared_ptr<const CompiledGrammar> compile_gbnf(
    const std::string& gbnf, const std::vector<std::string>& extra = {}) {
  auto v = byte_vocab(extra);
  GrammarCompiler c(v, {eos_of(*v)});
  return c.compile({ConstraintSpec::Kind::kGbnf, gbnf, {}, {}});
}

// Whole-string match: all bytes accepted and the grammar can end there.
inline bool matches(const std::shared_ptr<const CompiledGrammar>& g, const std::string& s) {
  GrammarMatcher m(g);
  return m.accept_bytes(s) && m.can_terminate();
}

// Some continuation exists.
inline bool is_prefix(const std::shared_ptr<const CompiledGrammar>& g, const std::string& s) {
  GrammarMatcher m(g);
  return m.accept_bytes(s);
}

inline bool bit(const std::vector<uint32_t>& words, int32_t t) {
  return words[t / 32] >> (t % 32) & 1;
}

}  // namespace ps::test
