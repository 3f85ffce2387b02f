#include "train/trainer.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <set>

#include "model/model_weights.h"
#include "tests/train/train_test_util.h"
#include "train/batch_schedule.h"

namespace ps {
namespace {

struct SmallRun {
  std::vector<ChatExample> examples = traintest::small_examples();
  Tokenizer tok = traintest::small_tokenizer(examples);
  ModelConfig config = traintest::small_train_config(tok.vocab_size());
  TrainOptions options;

  SmallRun() {
    options.total_steps = 40;
    options.batch_size = 4;
    options.learning_rate = 1e-2;
    options.warmup_steps = 5;
    options.seed = 5;
  }
  std::vector<TokenizedExample> data() const {
    std::vector<TokenizedExample> out;
    for (const ChatExample& e : examples) out.push_back(tokenize_example(tok, e, 128));
    return out;
  }
};

TEST(Trainer, LossDecreases) {
  SmallRun run;
  Trainer trainer(run.config, run.data(), run.options);
  const double before = trainer.mean_loss();
  double first_steps = 0, last_steps = 0;
  for (int i = 0; i < 40; ++i) {
    const StepStats s = trainer.step();
    EXPECT_EQ(s.step, i + 1);
    EXPECT_GT(s.tokens, 0);
    EXPECT_TRUE(std::isfinite(s.loss));
    if (i < 5) first_steps += s.loss;
    if (i >= 35) last_steps += s.loss;
  }
  const double after = trainer.mean_loss();
  EXPECT_LT(last_steps, first_steps * 0.5);
  EXPECT_LT(after, before * 0.5) << "before " << before << " after " << after;
}

// A run stopped and resumed from its checkpoint continues exactly as if it never stopped: same
// step count, same batches, same optimizer moments, hence the same losses.
TEST(Trainer, ResumedCheckpointContinuesAtTheSameStepAndLoss) {
  SmallRun run;
  testutil::TempDir dir;
  const std::string path = dir.file("ckpt.pt");
  std::vector<double> straight;
  {
    Trainer t(run.config, run.data(), run.options, "tok-A");
    for (int i = 0; i < 8; ++i) straight.push_back(t.step().loss);
  }
  {
    Trainer t(run.config, run.data(), run.options, "tok-A");
    for (int i = 0; i < 4; ++i) t.step();
    t.save_checkpoint(path);
  }
  Trainer resumed(run.config, run.data(), run.options, "tok-A");
  resumed.load_checkpoint(path);
  EXPECT_EQ(resumed.steps_done(), 4);
  for (int i = 4; i < 8; ++i) {
    const StepStats s = resumed.step();
    EXPECT_EQ(s.step, i + 1);
    EXPECT_NEAR(s.loss, straight[static_cast<size_t>(i)], 1e-5) << "step " << i + 1;
  }

  // Another tokenizer (tag) or another shape must not resume from it.
  Trainer other_tag(run.config, run.data(), run.options, "tok-B");
  EXPECT_THROW(other_tag.load_checkpoint(path), std::runtime_error);
  ModelConfig wider = run.config;
  wider.intermediate_size = 96;
  Trainer other_shape(wider, run.data(), run.options, "tok-A");
  EXPECT_THROW(other_shape.load_checkpoint(path), std::runtime_error);
  EXPECT_THROW(resumed.load_checkpoint(dir.file("missing.pt")), std::exception);
}

TEST(Trainer, RejectsTokensOutsideTheVocabulary) {
  SmallRun run;
  ModelConfig small = run.config;
  small.vocab_size = 260;  // the test tokenizer has merges above this
  EXPECT_THROW(Trainer(small, run.data(), run.options), std::invalid_argument);
}

TEST(LearningRate, WarmsUpThenFollowsTheCosine) {
  TrainOptions o;
  o.learning_rate = 1.0;
  o.min_lr_ratio = 0.1;
  o.warmup_steps = 10;
  o.total_steps = 110;
  EXPECT_DOUBLE_EQ(learning_rate_at(o, 0), 0.1);
  EXPECT_DOUBLE_EQ(learning_rate_at(o, 9), 1.0);
  EXPECT_DOUBLE_EQ(learning_rate_at(o, 10), 1.0);
  EXPECT_NEAR(learning_rate_at(o, 60), 0.55, 1e-12);  // halfway down the cosine
  EXPECT_NEAR(learning_rate_at(o, 110), 0.1, 1e-12);
  EXPECT_NEAR(learning_rate_at(o, 500), 0.1, 1e-12);  // stays at the floor past the end
  for (int64_t s = 10; s < 110; ++s) EXPECT_GE(learning_rate_at(o, s), learning_rate_at(o, s + 1));
}

TEST(BatchSchedule, EachEpochVisitsEveryExampleOnceAndIsReproducible) {
  std::vector<int32_t> lengths;
  for (int i = 0; i < 50; ++i) lengths.push_back(10 + (i * 37) % 90);
  BatchSchedule a(lengths, 8, 1), b(lengths, 8, 1), other_seed(lengths, 8, 2);
  EXPECT_EQ(a.batches_per_epoch(), 7);
  bool differs = false;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    std::multiset<int32_t> seen;
    for (int64_t s = epoch * 7; s < (epoch + 1) * 7; ++s) {
      const std::vector<int32_t> batch = a.batch(s);
      EXPECT_EQ(batch, b.batch(s));
      differs = differs || batch != other_seed.batch(s);
      seen.insert(batch.begin(), batch.end());
    }
    EXPECT_EQ(seen.size(), 50u);
    EXPECT_EQ(std::set<int32_t>(seen.begin(), seen.end()).size(), 50u);
  }
  EXPECT_TRUE(differs);
  // Jumping straight to a late step (a resumed run) gives the same batch.
  BatchSchedule c(lengths, 8, 1);
  EXPECT_EQ(c.batch(20), a.batch(20));
}

}  // namespace
}  // namespace ps
