// Fine-tuning's two pieces: a tokenizer that gains added tokens, and weights copied into a model
// whose vocabulary may be larger.
#include "train/warm_start.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "checkpoint/random_weights.h"
#include "model/model_weights.h"
#include "tests/train/train_test_util.h"
#include "torch_bridge/torch_tensor.h"

namespace ps {
namespace {

TEST(WarmStart, AppendsMissingAddedTokensAfterTheLastId) {
  const std::vector<ChatExample> examples = traintest::small_examples();
  BpeTrainOptions o;
  o.vocab_size = 320;
  const std::string base = train_byte_level_bpe(tokenizer_corpus(examples), o);
  const Tokenizer before = Tokenizer::from_json_text(base, "base");
  const std::string grown = tokenizer_with_added_tokens(base, {"<tool_call>", "</tool_call>"});
  const Tokenizer after = Tokenizer::from_json_text(grown, "grown");
  const int32_t v = before.vocab_size();
  EXPECT_EQ(after.vocab_size(), v + 2);
  EXPECT_EQ(after.encode("<tool_call>"), std::vector<int32_t>{v});
  EXPECT_EQ(after.encode("a</tool_call>b").size(), 3u);
  EXPECT_FALSE(after.is_special(v));
  EXPECT_TRUE(after.is_special(2));
  // Old text tokenizes as before; adding again changes nothing.
  EXPECT_EQ(after.encode("你好！Hello"), before.encode("你好！Hello"));
  EXPECT_EQ(tokenizer_with_added_tokens(grown, {"<tool_call>"}), grown);
  EXPECT_THROW(tokenizer_with_added_tokens("{\"version\": \"1.0\"}", {"x"}), std::runtime_error);
  EXPECT_THROW(tokenizer_with_added_tokens("not json", {"x"}), std::runtime_error);
}

TEST(WarmStart, CopiesWeightsAndKeepsNewEmbeddingRows) {
  ModelConfig small = traintest::small_train_config(40);
  ModelConfig large = small;
  large.vocab_size = 42;
  const TorchWeights from = to_torch(make_random_weights(small, 1));
  TorchWeights to = to_torch(make_random_weights(large, 2));
  const at::Tensor new_rows = to.embed_tokens.narrow(0, 40, 2).clone();
  copy_weights_into(from, to);
  EXPECT_TRUE(at::equal(to.embed_tokens.narrow(0, 0, 40), from.embed_tokens));
  EXPECT_TRUE(at::equal(to.embed_tokens.narrow(0, 40, 2), new_rows));
  EXPECT_TRUE(at::equal(to.norm, from.norm));
  ASSERT_EQ(to.layers.size(), from.layers.size());

  ModelConfig wider = large;
  wider.intermediate_size *= 2;
  TorchWeights other = to_torch(make_random_weights(wider, 3));
  try {
    copy_weights_into(from, other);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("mlp"), std::string::npos) << e.what();
  }
  // Fewer rows in the model being trained than in the one copied: no fit.
  TorchWeights smaller = to_torch(make_random_weights(traintest::small_train_config(30), 4));
  EXPECT_THROW(copy_weights_into(from, smaller), std::runtime_error);
}

}  // namespace
}  // namespace ps
