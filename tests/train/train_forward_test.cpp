#include "train/train_forward.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "checkpoint/loader.h"
#include "checkpoint/random_weights.h"
#include "model/model_weights.h"
#include "reference/naive_forward.h"
#include "tests/train/train_test_util.h"
#include "torch_bridge/torch_tensor.h"
#include "train/export_model.h"

namespace ps {
namespace {

void expect_close(const std::vector<float>& a, const std::vector<float>& b, float tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], tol) << "at " << i;
}

// The trainer must learn the function the server computes: same names, same RoPE, same norms.
TEST(TrainForward, MatchesTheNaiveReferenceForward) {
  for (const char* type : {"qwen3", "qwen2", "llama"}) {
    ModelConfig c = testutil::small_config(type);
    const ModelWeights w = make_random_weights(c, 7);
    const std::vector<int32_t> tokens = {1, 17, 250, 3, 99, 42, 42, 0, 5};
    expect_close(train_logits_single(w, tokens), naive_logits(w, tokens), 1e-4f);
  }
}

TEST(TrainForward, PaddingAfterASequenceDoesNotChangeIt) {
  const ModelWeights w = make_random_weights(testutil::small_config(), 3);
  const std::vector<int32_t> a = {1, 5, 9, 200};
  const at::Tensor ids = at::tensor({1, 5, 9, 200, 0, 0, 1, 2, 3, 4, 5, 6}, at::kLong).view({2, 6});
  const at::NoGradGuard no_grad;
  const at::Tensor logits = train_logits(to_torch(w), ids);
  const at::Tensor first = logits[0].narrow(0, 0, 4).contiguous();
  const std::vector<float> got(first.data_ptr<float>(), first.data_ptr<float>() + first.numel());
  expect_close(got, naive_logits(w, a), 1e-4f);
}

// Export writes what load_model reads back: same tensors (f32), the learned tokenizer, and the
// ChatML EOS setup.
TEST(ExportModel, LoadsBackWithTheSameLogits) {
  testutil::TempDir dir;
  const std::vector<ChatExample> examples = traintest::small_examples();
  BpeTrainOptions bpe;
  bpe.vocab_size = 320;
  const std::string tokenizer_json = train_byte_level_bpe(tokenizer_corpus(examples), bpe);
  const Tokenizer tok = Tokenizer::from_json_text(tokenizer_json, "test");
  const ModelWeights w = make_random_weights(traintest::small_train_config(tok.vocab_size()), 11);
  export_model(dir.path(), w, tokenizer_json, WeightDtype::kF32);

  const LoadedModel loaded = load_model(dir.path());
  EXPECT_EQ(loaded.config.vocab_size, tok.vocab_size());
  EXPECT_EQ(loaded.config.eos_token_ids, (std::vector<int32_t>{2, 0}));
  const std::vector<int32_t> tokens = tok.encode("<|im_start|>user\n你是谁？<|im_end|>\n");
  expect_close(naive_logits(*loaded.weights, tokens), train_logits_single(w, tokens), 1e-5f);
  EXPECT_EQ(Tokenizer::from_file(dir.file("tokenizer.json")).encode("你是谁？"),
            tok.encode("你是谁？"));
}

}  // namespace
}  // namespace ps
