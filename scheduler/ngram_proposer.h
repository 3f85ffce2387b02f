#pragma once
// Draft tokens without a draft model (prompt lookup): when the last n tokens of a sequence
// occurred earlier in it, the tokens that followed them then are a good guess for what follows
// now. Inputs that the answer quotes (code edits, summaries, retrieval) make such guesses right
// often; a wrong guess only costs the rows that verify it.
#include <cstdint>
#include <span>
#include <vector>

namespace ps {

struct NgramLookup {
  int32_t max_draft = 0;  // tokens to propose at most
  int32_t ngram_max = 3;  // suffix lengths tried, longest first, down to ngram_min
  int32_t ngram_min = 1;
};

// For n from ngram_max down to ngram_min: finds the most recent earlier occurrence of the last n
// tokens of `tokens` and returns up to max_draft tokens that followed it (fewer when the
// sequence ends first). The first n that matches wins; no match gives an empty draft. Throws
// std::invalid_argument on ngram_min < 1 or ngram_min > ngram_max.
std::vector<int32_t> propose_ngram_draft(std::span<const int32_t> tokens,
                                         const NgramLookup& lookup);

}  // namespace ps
