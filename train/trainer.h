#pragma once
// One training run of a decoder on tokenized chat examples: AdamW, linear warmup then cosine
// decay, gradient-norm clipping, and checkpoints that resume at the same step with the same
// weights, optimizer moments and batch order.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "train/chat_data.h"

namespace ps {

struct ModelWeights;
struct TorchWeights;

struct TrainOptions {
  int64_t total_steps = 3000;
  int32_t batch_size = 16;
  double learning_rate = 2e-3;  // peak, reached at the end of warmup
  double min_lr_ratio = 0.1;    // the cosine ends at learning_rate * min_lr_ratio
  int64_t warmup_steps = 100;
  double weight_decay = 0.05;  // matrices only: norm weights are not decayed
  double grad_clip = 1.0;      // max global L2 norm of the gradient
  uint64_t seed = 0;           // initial weights and batch order
};

struct StepStats {
  int64_t step = 0;  // steps done after this one (1 after the first)
  double loss = 0;   // mean cross-entropy over the batch's trained tokens
  double lr = 0;
  double grad_norm = 0;  // before clipping
  int64_t tokens = 0;    // trained (reply) tokens in the batch
};

// Learning rate for 0-based `step`: linear warmup to the peak, then cosine down to the floor.
double learning_rate_at(const TrainOptions& options, int64_t step);

class Trainer {
 public:
  // Starts from make_random_weights(config, options.seed). `tag` is saved with checkpoints and
  // must match on load: the caller puts there what the token ids mean (the tokenizer), so a
  // checkpoint is never resumed on differently tokenized data. Throws std::invalid_argument when
  // an example holds a token id outside config.vocab_size.
  Trainer(const ModelConfig& config, std::vector<TokenizedExample> data,
          const TrainOptions& options, std::string tag = "");
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Fine-tuning: replaces the random initial weights by `init` (see copy_weights_into in
  // train/warm_start.h). Only before the first step; throws std::logic_error after it.
  void start_from(const ModelWeights& init);

  StepStats step();
  int64_t steps_done() const;
  const TrainOptions& options() const;

  // Mean per-token loss over all examples, no gradient: the number a README can quote.
  double mean_loss() const;

  // Weights, optimizer state and step count in one file, written through a rename so a crash
  // mid-write leaves the previous checkpoint intact.
  void save_checkpoint(const std::string& path) const;
  // Throws std::runtime_error naming the file when it holds another model shape or tag.
  void load_checkpoint(const std::string& path);

  // fp32, CPU; tensors require grad (use under no-grad or copy before serving).
  // The weights as the serve path holds them: views of the training tensors (valid until the
  // next step changes them).
  ModelWeights weights() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ps
