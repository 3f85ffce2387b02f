#pragma once
// Writes trained weights as a model directory that load_model and the server read.
#include <string>

#include "checkpoint/tiny_model.h"

namespace ps {

struct ModelWeights;

// config.json, generation_config.json, tokenizer_config.json (make-tiny-model's layout, with
// <|im_end|> as EOS, but the tiny chat template of train/tiny_chat_template.h and every added
// token of `tokenizer_json` in added_tokens_decoder), the given tokenizer.json, and
// model.safetensors in `dtype`.
// Throws std::runtime_error naming the path on failure.
void export_model(const std::string& dir, const ModelWeights& weights,
                  const std::string& tokenizer_json, WeightDtype dtype);

}  // namespace ps
