#include "train/warm_start.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "model/model_weights.h"
#include "model/shape_string.h"
#include "torch_bridge/torch_tensor.h"

namespace ps {

std::string tokenizer_with_added_tokens(const std::string& tokenizer_json,
                                        const std::vector<std::string>& tokens) {
  using json = nlohmann::ordered_json;
  json tok = json::parse(tokenizer_json, nullptr, /*allow_exceptions=*/false);
  if (!tok.is_object() || !tok.contains("added_tokens") || !tok["added_tokens"].is_array() ||
      !tok.contains("model") || !tok["model"].contains("vocab") ||
      !tok["model"]["vocab"].is_object()) {
    throw std::runtime_error("--init-from: tokenizer.json lacks added_tokens or model.vocab");
  }
  int64_t next = 0;
  for (const auto& [text, id] : tok["model"]["vocab"].items()) {
    next = std::max(next, id.get<int64_t>() + 1);
  }
  for (const json& t : tok["added_tokens"]) next = std::max(next, t.at("id").get<int64_t>() + 1);
  for (const std::string& content : tokens) {
    const bool present =
        std::any_of(tok["added_tokens"].begin(), tok["added_tokens"].end(),
                    [&](const json& t) { return t.value("content", "") == content; });
    if (present) continue;
    tok["added_tokens"].push_back({{"id", next++},
                                   {"content", content},
                                   {"single_word", false},
                                   {"lstrip", false},
                                   {"rstrip", false},
                                   {"normalized", false},
                                   {"special", false}});
  }
  return tok.dump(2);
}

void copy_weights_into(const TorchWeights& from_const, TorchWeights& to) {
  TorchWeights from = from_const;  // shares the tensors; weight_slots needs a mutable object
  if (from.config.tie_word_embeddings != to.config.tie_word_embeddings) {
    throw std::runtime_error("--init-from: the model's tie_word_embeddings differs");
  }
  const std::vector<TorchWeightSlot> src = weight_slots(from);
  const std::vector<TorchWeightSlot> dst = weight_slots(to);
  if (src.size() != dst.size()) {
    throw std::runtime_error("--init-from: the model has another number of tensors");
  }
  const at::NoGradGuard no_grad;
  for (size_t i = 0; i < src.size(); ++i) {
    const at::Tensor& s = *src[i].tensor;
    at::Tensor& d = *dst[i].tensor;
    const bool vocab_rows =
        dst[i].name == "model.embed_tokens.weight" || dst[i].name == "lm_head.weight";
    const bool same = s.sizes().equals(d.sizes());
    const bool fewer_rows = vocab_rows && s.dim() == 2 && d.dim() == 2 && s.size(1) == d.size(1) &&
                            s.size(0) <= d.size(0);
    if (src[i].name != dst[i].name || !(same || fewer_rows)) {
      throw std::runtime_error("--init-from: tensor " + src[i].name + " has shape " +
                               shape_string(s.sizes().vec()) + ", the model being trained " +
                               dst[i].name + " " + shape_string(d.sizes().vec()));
    }
    d.narrow(0, 0, s.size(0)).copy_(s);
  }
}

}  // namespace ps
