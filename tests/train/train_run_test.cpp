// The smoke run of `pagedserve train-tiny` on the committed data: a few steps, twice with the
// same seed (identical weights), then resumed from its checkpoint.
#include "train/train_run.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "model/loader.h"
#include "tests/model/tiny_test_util.h"

namespace ps {
namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TrainRunOptions smoke_options(const std::string& out_dir, int64_t steps) {
  TrainRunOptions o;
  o.data_path = std::string(PAGEDSERVE_SOURCE_DIR) + "/data/tiny_chat/train.jsonl";
  o.out_dir = out_dir;
  o.config = tiny_chat_config();
  o.config.hidden_size = 64;  // the shipped shape's layout, smaller so CI stays fast
  o.config.intermediate_size = 128;
  o.config.num_hidden_layers = 2;
  o.config.head_dim = 16;
  o.tokenizer_vocab = 512;
  o.train.total_steps = steps;
  o.train.warmup_steps = 2;
  o.train.batch_size = 8;
  o.check_examples = 0;  // an untrained model rarely stops: greedy checks would take long
  o.dtype = WeightDtype::kF16;
  return o;
}

TEST(TrainTinySmoke, IsReproducibleAndResumes) {
  testutil::TempDir dir;
  std::ostringstream log_a, log_b, log_c;
  const TrainRunResult a = run_train_tiny(smoke_options(dir.file("a"), 3), log_a);
  const TrainRunResult b = run_train_tiny(smoke_options(dir.file("b"), 3), log_b);
  EXPECT_EQ(a.steps, 3);
  EXPECT_TRUE(std::isfinite(a.final_loss));
  EXPECT_EQ(a.final_loss, b.final_loss);
  EXPECT_EQ(read_bytes(dir.file("a/model.safetensors")),
            read_bytes(dir.file("b/model.safetensors")));
  EXPECT_EQ(read_bytes(dir.file("a/tokenizer.json")), read_bytes(dir.file("b/tokenizer.json")));
  EXPECT_NE(log_a.str().find("step      3/3"), std::string::npos) << log_a.str();

  // The same command with more steps continues from a.checkpoint.pt instead of starting over.
  const TrainRunResult c = run_train_tiny(smoke_options(dir.file("a"), 5), log_c);
  EXPECT_EQ(c.steps, 5);
  EXPECT_NE(log_c.str().find("resumed from " + dir.file("a") + ".checkpoint.pt at step 3"),
            std::string::npos)
      << log_c.str();
  EXPECT_EQ(log_c.str().find("step      3/5"), std::string::npos) << "steps 1-3 ran again";
  EXPECT_NE(log_c.str().find("step      5/5"), std::string::npos) << log_c.str();

  const LoadedModel m = load_model(dir.file("a"));
  EXPECT_EQ(m.config.hidden_size, 64);
  EXPECT_EQ(m.config.vocab_size, 512);
}

}  // namespace
}  // namespace ps
