#include "train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <stdexcept>

#include "checkpoint/random_weights.h"
#include "model/model_weights.h"
#include "torch_bridge/torch_tensor.h"
#include "train/batch_schedule.h"
#include "train/train_forward.h"
#include "train/warm_start.h"

namespace ps {
namespace {

std::vector<int32_t> lengths_of(const std::vector<TokenizedExample>& data) {
  std::vector<int32_t> out;
  for (const TokenizedExample& e : data) out.push_back(static_cast<int32_t>(e.tokens.size()));
  return out;
}

// Right-padded ids and targets [B, T]: padding is token 0 (<|endoftext|>) with an ignored target;
// causal attention keeps it from touching the real tokens before it.
std::pair<at::Tensor, at::Tensor> make_batch(const std::vector<TokenizedExample>& data,
                                             const std::vector<int32_t>& rows) {
  size_t T = 0;
  for (int32_t r : rows) T = std::max(T, data[static_cast<size_t>(r)].tokens.size());
  const int64_t B = static_cast<int64_t>(rows.size());
  at::Tensor ids = at::zeros({B, static_cast<int64_t>(T)}, at::kLong);
  at::Tensor targets = at::full({B, static_cast<int64_t>(T)}, kIgnoreTarget, at::kLong);
  auto ia = ids.accessor<int64_t, 2>();
  auto ta = targets.accessor<int64_t, 2>();
  for (int64_t b = 0; b < B; ++b) {
    const TokenizedExample& e = data[static_cast<size_t>(rows[static_cast<size_t>(b)])];
    for (size_t t = 0; t < e.tokens.size(); ++t) {
      ia[b][static_cast<int64_t>(t)] = e.tokens[t];
      ta[b][static_cast<int64_t>(t)] = e.targets[t];
    }
  }
  return {ids, targets};
}

at::Tensor batch_loss(const TorchWeights& w, const at::Tensor& ids, const at::Tensor& targets,
                      torch::nn::functional::CrossEntropyFuncOptions::reduction_t reduction) {
  const at::Tensor logits = train_logits(w, ids);
  return torch::nn::functional::cross_entropy(logits.view({-1, logits.size(-1)}),
                                              targets.view({-1}),
                                              torch::nn::functional::CrossEntropyFuncOptions()
                                                  .ignore_index(kIgnoreTarget)
                                                  .reduction(reduction));
}

// Autograd leaves need their own memory: each tensor cloned out of the serve-path buffers.
TorchWeights owned_torch_weights(const ModelWeights& w) {
  TorchWeights t = to_torch(w);
  for (const TorchWeightSlot& slot : weight_slots(t)) *slot.tensor = slot.tensor->clone();
  if (t.config.tie_word_embeddings) t.lm_head = t.embed_tokens;
  return t;
}

}  // namespace

double learning_rate_at(const TrainOptions& o, int64_t step) {
  if (step < o.warmup_steps) {
    return o.learning_rate * static_cast<double>(step + 1) / static_cast<double>(o.warmup_steps);
  }
  const int64_t span = std::max<int64_t>(1, o.total_steps - o.warmup_steps);
  const double progress = std::min(1.0, static_cast<double>(step - o.warmup_steps) / span);
  const double floor = o.learning_rate * o.min_lr_ratio;
  return floor + (o.learning_rate - floor) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

struct Trainer::Impl {
  TrainOptions options;
  std::string tag;
  std::vector<TokenizedExample> data;
  TorchWeights weights;
  std::vector<at::Tensor> params;  // in weight_slots order
  std::vector<std::string> names;
  BatchSchedule schedule;
  std::unique_ptr<torch::optim::AdamW> optimizer;
  int64_t step = 0;

  Impl(const ModelConfig& config, std::vector<TokenizedExample> d, const TrainOptions& o,
       std::string t)
      : options(o),
        tag(std::move(t)),
        data(std::move(d)),
        weights(owned_torch_weights(make_random_weights(config, o.seed))),
        schedule(lengths_of(data), o.batch_size, o.seed) {
    for (const TokenizedExample& e : data) {
      for (int32_t t : e.tokens) {
        if (t < 0 || t >= config.vocab_size) {
          throw std::invalid_argument("Trainer: token id " + std::to_string(t) +
                                      " is outside the model's vocabulary of " +
                                      std::to_string(config.vocab_size));
        }
      }
    }
    std::vector<at::Tensor> decayed, plain;
    for (const TorchWeightSlot& slot : weight_slots(weights)) {
      slot.tensor->requires_grad_(true);
      params.push_back(*slot.tensor);
      names.push_back(slot.name);
      (slot.tensor->dim() >= 2 ? decayed : plain).push_back(*slot.tensor);
    }
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(decayed, std::make_unique<torch::optim::AdamWOptions>(
                                     torch::optim::AdamWOptions(o.learning_rate)
                                         .betas({0.9, 0.95})
                                         .weight_decay(o.weight_decay)));
    groups.emplace_back(
        plain,
        std::make_unique<torch::optim::AdamWOptions>(
            torch::optim::AdamWOptions(o.learning_rate).betas({0.9, 0.95}).weight_decay(0.0)));
    optimizer = std::make_unique<torch::optim::AdamW>(std::move(groups));
  }
};

Trainer::Trainer(const ModelConfig& config, std::vector<TokenizedExample> data,
                 const TrainOptions& options, std::string tag)
    : impl_(std::make_unique<Impl>(config, std::move(data), options, std::move(tag))) {}

Trainer::~Trainer() = default;

int64_t Trainer::steps_done() const {
  return impl_->step;
}
const TrainOptions& Trainer::options() const {
  return impl_->options;
}
ModelWeights Trainer::weights() const {
  return from_torch(impl_->weights);
}

void Trainer::start_from(const ModelWeights& init) {
  if (impl_->step != 0) throw std::logic_error("Trainer::start_from after training steps");
  copy_weights_into(to_torch(init), impl_->weights);
}

StepStats Trainer::step() {
  Impl& m = *impl_;
  StepStats s;
  s.lr = learning_rate_at(m.options, m.step);
  for (auto& group : m.optimizer->param_groups()) {
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(s.lr);
  }
  const auto [ids, targets] = make_batch(m.data, m.schedule.batch(m.step));
  m.optimizer->zero_grad();
  const at::Tensor loss = batch_loss(m.weights, ids, targets, torch::kMean);
  loss.backward();
  s.grad_norm = torch::nn::utils::clip_grad_norm_(m.params, m.options.grad_clip);
  m.optimizer->step();
  s.loss = loss.item<double>();
  s.tokens = targets.ne(kIgnoreTarget).sum().item<int64_t>();
  s.step = ++m.step;
  return s;
}

double Trainer::mean_loss() const {
  const Impl& m = *impl_;
  const torch::NoGradGuard no_grad;
  std::vector<int32_t> order(m.data.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return m.data[static_cast<size_t>(a)].tokens.size() <
           m.data[static_cast<size_t>(b)].tokens.size();
  });
  double total = 0;
  int64_t count = 0;
  constexpr size_t kEvalBatch = 32;
  for (size_t start = 0; start < order.size(); start += kEvalBatch) {
    const std::vector<int32_t> rows(
        order.begin() + static_cast<std::ptrdiff_t>(start),
        order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + kEvalBatch)));
    const auto [ids, targets] = make_batch(m.data, rows);
    total += batch_loss(m.weights, ids, targets, torch::kSum).item<double>();
    count += targets.ne(kIgnoreTarget).sum().item<int64_t>();
  }
  return count ? total / static_cast<double>(count) : 0.0;
}

void Trainer::save_checkpoint(const std::string& path) const {
  const Impl& m = *impl_;
  torch::serialize::OutputArchive archive;
  archive.write("config", c10::IValue(m.weights.config.to_json()));
  archive.write("step", c10::IValue(m.step));
  archive.write("tag", c10::IValue(m.tag));
  // Indexed keys: archive keys may not contain the dots of checkpoint names.
  for (size_t i = 0; i < m.params.size(); ++i) {
    archive.write("param_" + std::to_string(i), m.params[i].detach());
  }
  torch::serialize::OutputArchive opt;
  m.optimizer->save(opt);
  archive.write("optimizer", opt);
  const std::string tmp = path + ".tmp";
  archive.save_to(tmp);
  std::filesystem::rename(tmp, path);
}

void Trainer::load_checkpoint(const std::string& path) {
  Impl& m = *impl_;
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": not a training checkpoint: " + e.what_without_backtrace());
  }
  c10::IValue config, step, tag;
  archive.read("config", config);
  archive.read("step", step);
  archive.read("tag", tag);
  if (config.toStringRef() != m.weights.config.to_json()) {
    throw std::runtime_error(path +
                             ": checkpoint of another model shape; delete it or use the "
                             "same shape flags\n  checkpoint: " +
                             config.toStringRef());
  }
  if (tag.toStringRef() != m.tag) {
    throw std::runtime_error(path +
                             ": checkpoint made with another tokenizer or data; delete it "
                             "to start over");
  }
  const torch::NoGradGuard no_grad;
  for (size_t i = 0; i < m.params.size(); ++i) {
    at::Tensor t;
    archive.read("param_" + std::to_string(i), t);
    if (!t.sizes().equals(m.params[i].sizes())) {
      throw std::runtime_error(path + ": tensor " + m.names[i] + " has the wrong shape");
    }
    m.params[i].copy_(t);
  }
  torch::serialize::InputArchive opt;
  archive.read("optimizer", opt);
  m.optimizer->load(opt);
  m.step = step.toInt();
}

}  // namespace ps
