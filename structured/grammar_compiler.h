#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "structured/compiled_grammar.h"
#include "structured/constraint_spec.h"
#include "structured/gbnf_parser.h"

namespace ps {

struct CompileLimits {
  GbnfLimits gbnf;                    // rules, elements (after {m,n}), text size
  size_t max_positions = 50000;       // terminal positions, each gets a precomputed token mask
  double max_compile_seconds = 10.0;  // wall time of one compile (mask precomputation)
  size_t max_mask_bytes = size_t{512} << 20;  // memory of one grammar's precomputed masks
  size_t max_cached_grammars = 64;            // compiled grammars kept by content
  uint32_t max_stacks = 256;       // parses a matcher follows at once (see FlatGrammar::max_stacks)
  size_t max_trigger_bytes = 256;  // a lazy trigger is scanned against every token per state
};

// Spec -> GBNF -> IR -> CompiledGrammar (flat grammar + per-position token masks over the
// vocabulary's trie). Results are cached by content; compile() is thread-safe and meant for
// HTTP handler threads (it can take a while on a big vocabulary), never the engine thread.
// Errors and exceeded limits throw StructuredError.
class GrammarCompiler {
 public:
  GrammarCompiler(std::shared_ptr<const std::vector<std::string>> token_bytes,
                  std::vector<int32_t> eos_ids, CompileLimits limits = {},
                  std::vector<int32_t> special_ids = {});

  std::shared_ptr<const CompiledGrammar> compile(const ConstraintSpec& spec);

  // The GBNF text a spec stands for (JSON Schema, regex, ... through the schema functions).
  static std::string to_gbnf(const ConstraintSpec& spec);

  const VocabIndex& vocab() const { return *vocab_; }
  size_t cache_hits() const;
  size_t cache_size() const;

 private:
  std::shared_ptr<const CompiledGrammar> build(const ConstraintSpec& spec) const;

  std::shared_ptr<const VocabIndex> vocab_;
  CompileLimits limits_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const CompiledGrammar>> cache_;
  std::vector<std::string> cache_order_;  // oldest first, for eviction
  size_t hits_ = 0;
};

// Builds a compiled grammar from an already parsed IR (tests and the compiler use it).
std::shared_ptr<const CompiledGrammar> compile_grammar(const Grammar& g,
                                                       std::shared_ptr<const VocabIndex> vocab,
                                                       const CompileLimits& limits,
                                                       const std::string& trigger = {});

}  // namespace ps
