#pragma once
// Fine-tuning from an existing model directory (`train-tiny --init-from DIR`): its tokenizer is
// kept, with any missing added tokens appended at the end of the vocabulary, and its weights are
// the starting point (embedding rows of the new tokens stay at their random initialization).
// A model that already knows its old data then learns new dialogues in a fraction of the steps
// of a fresh run.
#include <string>
#include <vector>

namespace ps {

struct TorchWeights;

// `tokenizer_json` with each of `tokens` that it lacks added as a non-special added token, ids
// after the largest id in use. Throws std::runtime_error when the text is no tokenizer.json.
std::string tokenizer_with_added_tokens(const std::string& tokenizer_json,
                                        const std::vector<std::string>& tokens);

// Copies `from` into `to` (no gradient): every tensor must have the same shape, except the
// embedding (and an untied lm_head), of which `to` may have more rows; the rows `from` has are
// copied and the rest kept. Throws std::runtime_error naming the tensor on any other mismatch.
void copy_weights_into(const TorchWeights& from, TorchWeights& to);

}  // namespace ps
