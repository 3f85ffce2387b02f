#include "structured/grammar_compiler.h"

// The schema helper's translators (JSON Schema, regex, choices -> GBNF). Without them (a build
// of this folder alone) only GBNF specs compile.
#if __has_include("structured/json_schema_to_gbnf.h")
#include "structured/json_schema_to_gbnf.h"
#define PAGEDSERVE_HAVE_SCHEMA_TO_GBNF 1
#endif

namespace ps {

GrammarCompiler::GrammarCompiler(std::shared_ptr<const std::vector<std::string>> token_bytes,
                                 std::vector<int32_t> eos_ids, CompileLimits limits,
                                 std::vector<int32_t> special_ids)
    : vocab_(std::make_shared<VocabIndex>(std::move(token_bytes), std::move(eos_ids),
                                          std::move(special_ids))),
      limits_(limits) {}

std::string GrammarCompiler::to_gbnf(const ConstraintSpec& spec) {
  using Kind = ConstraintSpec::Kind;
  if (spec.kind == Kind::kGbnf) return spec.text;
#ifdef PAGEDSERVE_HAVE_SCHEMA_TO_GBNF
  switch (spec.kind) {
    case Kind::kJsonSchema:
      return json_schema_to_gbnf_text(spec.text);  // keeps the schema's property order
    case Kind::kJsonObject:
      return json_object_gbnf();
    case Kind::kRegex:
      return regex_to_gbnf(spec.text);
    case Kind::kChoice:
      return choice_gbnf(spec.choices);
    case Kind::kGbnf:
      break;
  }
  return spec.text;
#else
  throw StructuredError(
      "this build has no JSON Schema/regex/choice compiler (structured/"
      "json_schema_to_gbnf.h); only GBNF grammars are available");
#endif
}

namespace {

std::string cache_key(const ConstraintSpec& spec) {
  // Length-prefixed fields, so no two specs share a key.
  std::string k = std::to_string(static_cast<int>(spec.kind)) + ":";
  auto add = [&](const std::string& s) { k += std::to_string(s.size()) + ":" + s; };
  add(spec.text);
  add(spec.trigger);
  k += std::to_string(spec.choices.size()) + ":";
  for (const auto& c : spec.choices) add(c);
  return k;
}

}  // namespace

std::shared_ptr<const CompiledGrammar> GrammarCompiler::build(const ConstraintSpec& spec) const {
  Grammar ir = parse_gbnf(to_gbnf(spec), limits_.gbnf);
  return compile_grammar(ir, vocab_, limits_, spec.trigger);
}

std::shared_ptr<const CompiledGrammar> GrammarCompiler::compile(const ConstraintSpec& spec) {
  std::string key = cache_key(spec);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      ++hits_;
      return it->second;
    }
  }
  // Built outside the lock: a slow grammar does not hold up other requests' compiles. Two
  // threads compiling the same new spec at once both build it; the first one kept wins.
  auto built = build(spec);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = cache_.emplace(key, built);
  std::shared_ptr<const CompiledGrammar> result = it->second;
  if (inserted) {
    cache_order_.push_back(key);
    while (cache_order_.size() > limits_.max_cached_grammars) {
      cache_.erase(cache_order_.front());
      cache_order_.erase(cache_order_.begin());
    }
  }
  return result;
}

size_t GrammarCompiler::cache_hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

size_t GrammarCompiler::cache_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

}  // namespace ps
