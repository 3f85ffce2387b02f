// The smoke run of `pagedserve train-tiny` on the committed data: a few steps, twice with the
// same seed (identical weights), then resumed from its checkpoint.
#include "train/train_run.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "checkpoint/loader.h"
#include "tests/model/tiny_test_util.h"
#include "tokenizer/tokenizer.h"
#include "train/tiny_chat_template.h"

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

  // The exported tokenizer_config.json carries the tiny template (what the server renders with)
  // and the two non-special tool-call tokens the tokenizer learned.
  const nlohmann::json tc = nlohmann::json::parse(read_bytes(dir.file("a/tokenizer_config.json")));
  EXPECT_EQ(tc["chat_template"], tiny_chat_template_source());
  EXPECT_EQ(tc["added_tokens_decoder"]["3"]["content"], "<tool_call>");
  EXPECT_EQ(tc["added_tokens_decoder"]["3"]["special"], false);
  EXPECT_EQ(tc["added_tokens_decoder"]["4"]["content"], "</tool_call>");
  EXPECT_EQ(tc["added_tokens_decoder"]["2"]["special"], true);
  const Tokenizer tok = Tokenizer::from_file(dir.file("a/tokenizer.json"));
  EXPECT_EQ(tok.encode("<tool_call>"), std::vector<int32_t>{3});
  EXPECT_FALSE(tok.is_special(3));
}

TEST(TrainTinySmoke, FineTunesAModelWithItsTokenizer) {
  testutil::TempDir dir;
  std::ostringstream log_a, log_b;
  run_train_tiny(smoke_options(dir.file("base"), 2), log_a);
  // A base whose tokenizer lacks the tool-call tokens, as the model shipped before them did.
  nlohmann::ordered_json tok =
      nlohmann::ordered_json::parse(read_bytes(dir.file("base/tokenizer.json")));
  auto& added = tok["added_tokens"];
  added.erase(added.begin() + 3, added.end());
  std::ofstream(dir.file("base/tokenizer.json"), std::ios::binary) << tok.dump(2);

  TrainRunOptions o = smoke_options(dir.file("tuned"), 2);
  o.init_from = dir.file("base");
  o.config.hidden_size = 999;  // ignored: the base's shape wins
  const TrainRunResult r = run_train_tiny(o, log_b);
  EXPECT_EQ(r.steps, 2);
  EXPECT_NE(log_b.str().find("fine-tuning " + dir.file("base")), std::string::npos) << log_b.str();
  const LoadedModel base = load_model(dir.file("base"));
  const LoadedModel tuned = load_model(dir.file("tuned"));
  EXPECT_EQ(tuned.config.hidden_size, 64);
  // The base tokenizer's merges, with the two tokens appended after its last id.
  EXPECT_EQ(tuned.config.vocab_size, base.config.vocab_size + 2);
  const Tokenizer t = Tokenizer::from_file(dir.file("tuned/tokenizer.json"));
  EXPECT_EQ(t.encode("<tool_call>"), std::vector<int32_t>{base.config.vocab_size});
  EXPECT_EQ(t.encode("</tool_call>"), std::vector<int32_t>{base.config.vocab_size + 1});
  EXPECT_FALSE(t.is_special(base.config.vocab_size));
}

}  // namespace
}  // namespace ps
