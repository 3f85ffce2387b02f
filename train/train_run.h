#pragma once
// `pagedserve train-tiny` end to end: examples -> tokenizer -> training loop with progress and
// checkpoints -> model directory -> a greedy check of the exported (rounded) weights.
#include <cstdint>
#include <ostream>
#include <string>

#include "checkpoint/tiny_model.h"
#include "model/model_config.h"
#include "train/trainer.h"

namespace ps {

struct TrainRunOptions {
  std::string data_path;
  std::string out_dir;
  std::string checkpoint_path;  // empty: out_dir + ".checkpoint.pt" (beside the model, not in it)
  ModelConfig config;           // the shape; vocab_size is set from the learned tokenizer
  int32_t tokenizer_vocab = 2048;
  int32_t max_seq_len = 256;
  TrainOptions train;
  WeightDtype dtype = WeightDtype::kBF16;
  int64_t save_every = 100;     // steps between checkpoints
  int64_t log_every = 10;       // steps between progress lines
  int32_t check_examples = 32;  // training questions answered greedily by the exported model
  bool fresh = false;           // ignore an existing checkpoint
  // A model directory to fine-tune (train/warm_start.h): its tokenizer (plus <tool_call> and
  // </tool_call> when missing) and shape replace the learned tokenizer and `config`, and its
  // weights the random start. Empty: train from scratch.
  std::string init_from;
};

// The default shape of the shipped model: qwen3, hidden 256, 4 layers, 4 heads of 64, 2 KV heads,
// MLP 704, tied embeddings, 512 positions.
ModelConfig tiny_chat_config();

struct TrainRunResult {
  int64_t steps = 0;
  double final_loss = 0;      // mean per-token loss over the whole training set
  double seconds = 0;         // wall time of this invocation
  int64_t checked = 0;        // exported-model greedy check: questions asked
  int64_t checked_exact = 0;  // ... and answered exactly
};

TrainRunResult run_train_tiny(const TrainRunOptions& options, std::ostream& log);

}  // namespace ps
