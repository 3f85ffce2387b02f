#include "train/train_run.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "checkpoint/loader.h"
#include "model/model_weights.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tokenizer.h"
#include "train/chat_data.h"
#include "train/eval.h"
#include "train/export_model.h"
#include "train/progress.h"
#include "train/tiny_chat_template.h"
#include "train/warm_start.h"

namespace ps {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

ModelConfig tiny_chat_config() {
  ModelConfig c;
  c.set_model_type("qwen3");
  c.hidden_size = 256;
  c.num_hidden_layers = 4;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 64;
  c.intermediate_size = 704;
  c.max_position_embeddings = 512;
  c.rope_theta = 10000.0f;
  c.tie_word_embeddings = true;
  return c;
}

TrainRunResult run_train_tiny(const TrainRunOptions& o, std::ostream& log) {
  const auto start = std::chrono::steady_clock::now();
  const std::string ckpt =
      o.checkpoint_path.empty() ? o.out_dir + ".checkpoint.pt" : o.checkpoint_path;
  const std::vector<ChatExample> examples = read_chat_jsonl(o.data_path);
  for (const fs::path& dir : {fs::path(o.out_dir), fs::path(ckpt).parent_path()}) {
    std::error_code ec;
    if (!dir.empty()) fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error(dir.string() + ": cannot create directory: " + ec.message());
  }

  // The merges are a pure function of the data, so relearning them on resume gives the same
  // tokenizer; the checkpoint's tag check catches data that changed in between. A fine-tuned
  // model keeps its tokenizer. Either way one token opens a call and one closes it, as in Qwen's.
  std::string tokenizer_json;
  std::optional<LoadedModel> init;
  if (o.init_from.empty()) {
    BpeTrainOptions bpe;
    bpe.vocab_size = o.tokenizer_vocab;
    bpe.added_tokens = {kToolCallOpen, kToolCallClose};
    tokenizer_json = train_byte_level_bpe(tokenizer_corpus(examples), bpe);
  } else {
    init = load_model(o.init_from);
    tokenizer_json = tokenizer_with_added_tokens(read_text(o.init_from + "/tokenizer.json"),
                                                 {kToolCallOpen, kToolCallClose});
  }
  const Tokenizer tokenizer = Tokenizer::from_json_text(tokenizer_json, "learned tokenizer");

  ModelConfig config = init ? init->config : o.config;
  config.vocab_size = tokenizer.vocab_size();
  config.eos_token_ids = {2, 0};  // <|im_end|> ends a reply; <|endoftext|> as a fallback
  config.bos_token_id = 1;
  config.validate("train-tiny");

  std::vector<TokenizedExample> data;
  int64_t total_tokens = 0, reply_tokens = 0;
  for (const ChatExample& ex : examples) {
    data.push_back(tokenize_example(tokenizer, ex, o.max_seq_len));
    total_tokens += static_cast<int64_t>(data.back().tokens.size());
    for (int32_t t : data.back().targets) reply_tokens += t != kIgnoreTarget ? 1 : 0;
  }
  Trainer trainer(config, std::move(data), o.train, tokenizer_json);
  if (init) {
    trainer.start_from(*init->weights);
    init.reset();  // the trainer holds its own copy
    log << "train-tiny: fine-tuning " << o.init_from << " (its tokenizer and weights)\n";
  }
  int64_t params = 0;
  {
    ModelWeights w = trainer.weights();
    for (const WeightSlot& s : weight_slots(w)) params += s.tensor->numel();
  }
  log << "train-tiny: " << examples.size() << " examples, " << total_tokens << " tokens ("
      << reply_tokens << " trained), vocab " << config.vocab_size << ", " << params
      << " parameters\n";

  if (!o.fresh && fs::exists(ckpt)) {
    trainer.load_checkpoint(ckpt);
    log << "train-tiny: resumed from " << ckpt << " at step " << trainer.steps_done() << "\n";
  }
  ProgressLine progress(o.train.total_steps, trainer.steps_done());
  while (trainer.steps_done() < o.train.total_steps) {
    const StepStats s = trainer.step();
    progress.add(s);
    if (s.step % o.log_every == 0 || s.step == o.train.total_steps) log << progress.line() << "\n";
    if (s.step % o.save_every == 0) trainer.save_checkpoint(ckpt);
    log.flush();
  }
  trainer.save_checkpoint(ckpt);

  TrainRunResult r;
  r.steps = trainer.steps_done();
  r.final_loss = trainer.mean_loss();
  log << "train-tiny: mean loss over the training set " << r.final_loss << "\n";
  export_model(o.out_dir, trainer.weights(), tokenizer_json, o.dtype);
  log << "train-tiny: wrote " << o.out_dir << "\n";

  // The served weights are rounded to 16 bits; check that greedy answers survive that.
  const LoadedModel served = load_model(o.out_dir);
  const std::vector<ChatExample> sample(
      examples.begin(),
      examples.begin() +
          std::min<std::ptrdiff_t>(o.check_examples, static_cast<std::ptrdiff_t>(examples.size())));
  const EvalSummary check = evaluate(*served.weights, tokenizer, sample, o.max_seq_len);
  r.checked = static_cast<int64_t>(check.items.size());
  r.checked_exact = check.exact;
  log << "train-tiny: exported model answers " << check.exact << "/" << check.items.size()
      << " training questions exactly (similarity " << check.mean_similarity << ")\n";
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace ps
