#include <ATen/Parallel.h>

#include <cstdio>
#include <iostream>

#include "app/commands.h"
#include "app/flags.h"
#include "train/train_run.h"

namespace ps {
namespace {

constexpr const char* kTrainTinyUsage =
    "usage: pagedserve-train train-tiny --data FILE.jsonl --out DIR [flags]\n"
    "  trains a Qwen3-layout chat model on CPU and writes a model directory the server loads.\n"
    "  A checkpoint is kept in DIR.checkpoint.pt (or --checkpoint FILE); running the same\n"
    "  command again resumes from it (--fresh starts over). --init-from MODEL_DIR fine-tunes\n"
    "  that model (its tokenizer, shape and weights) instead of starting from random weights.\n"
    "training:  --steps 3000 --batch-size 16 --lr 2e-3 --min-lr-ratio 0.1 --warmup 100\n"
    "           --weight-decay 0.05 --grad-clip 1.0 --seed 0 --threads N\n"
    "output:    --dtype bf16|f16|f32 (bf16) --save-every 100 --log-every 10 --check 32\n"
    "shape:     --vocab-size 2048 (tokenizer target) --max-seq-len 256 --hidden-size 256\n"
    "           --num-layers 4 --num-heads 4 --num-kv-heads 2 --head-dim 64\n"
    "           --intermediate-size 704\n";

int32_t positive(const Flags& f, const char* name, int64_t fallback, int64_t max) {
  const int64_t v = f.i64(name, fallback);
  if (v < 1 || v > max) {
    throw UsageError(std::string("flag --") + name + " must be between 1 and " +
                     std::to_string(max));
  }
  return static_cast<int32_t>(v);
}

}  // namespace

int train_tiny_command(int argc, char** argv) {
  Flags f(argc, argv, 2, {"data",         "out",          "checkpoint",   "steps",
                          "batch-size",   "lr",           "min-lr-ratio", "warmup",
                          "weight-decay", "grad-clip",    "seed",         "threads",
                          "dtype",        "save-every",   "log-every",    "check",
                          "vocab-size",   "max-seq-len",  "hidden-size",  "num-layers",
                          "num-heads",    "num-kv-heads", "head-dim",     "intermediate-size",
                          "init-from"},
          {"fresh", "help"});
  if (f.on("help")) {
    std::fputs(kTrainTinyUsage, stdout);
    return 0;
  }
  if (!f.has("data") || !f.has("out")) {
    std::fputs(kTrainTinyUsage, stderr);
    throw UsageError("--data and --out are required");
  }
  if (!f.positional().empty()) throw UsageError("unexpected argument '" + f.positional()[0] + "'");

  TrainRunOptions o;
  o.data_path = f.str("data", "");
  o.out_dir = f.str("out", "");
  o.checkpoint_path = f.str("checkpoint", "");
  o.fresh = f.on("fresh");
  o.init_from = f.str("init-from", "");
  TrainOptions& t = o.train;
  t.total_steps = positive(f, "steps", t.total_steps, 10'000'000);
  t.batch_size = positive(f, "batch-size", t.batch_size, 4096);
  t.learning_rate = f.f64("lr", t.learning_rate);
  t.min_lr_ratio = f.f64("min-lr-ratio", t.min_lr_ratio);
  t.warmup_steps = f.i64("warmup", t.warmup_steps);
  t.weight_decay = f.f64("weight-decay", t.weight_decay);
  t.grad_clip = f.f64("grad-clip", t.grad_clip);
  t.seed = static_cast<uint64_t>(f.i64("seed", 0));
  if (!(t.learning_rate > 0)) throw UsageError("flag --lr must be positive");
  if (!(t.min_lr_ratio >= 0 && t.min_lr_ratio <= 1)) {
    throw UsageError("flag --min-lr-ratio must be between 0 and 1");
  }
  if (t.warmup_steps < 1) throw UsageError("flag --warmup must be at least 1");
  if (!(t.weight_decay >= 0)) throw UsageError("flag --weight-decay must be >= 0");
  if (!(t.grad_clip > 0)) throw UsageError("flag --grad-clip must be positive");

  const std::string dtype = f.str("dtype", "bf16");
  if (dtype == "bf16")
    o.dtype = WeightDtype::kBF16;
  else if (dtype == "f16")
    o.dtype = WeightDtype::kF16;
  else if (dtype == "f32")
    o.dtype = WeightDtype::kF32;
  else
    throw UsageError("flag --dtype must be bf16, f16 or f32, got '" + dtype + "'");
  o.save_every = positive(f, "save-every", o.save_every, 10'000'000);
  o.log_every = positive(f, "log-every", o.log_every, 10'000'000);
  o.check_examples = static_cast<int32_t>(f.i64("check", o.check_examples));
  o.tokenizer_vocab = positive(f, "vocab-size", o.tokenizer_vocab, 1 << 20);
  if (o.tokenizer_vocab < 3 + 256) throw UsageError("flag --vocab-size must be at least 259");
  o.max_seq_len = positive(f, "max-seq-len", o.max_seq_len, 1 << 16);

  ModelConfig& c = o.config;
  c = tiny_chat_config();
  c.hidden_size = positive(f, "hidden-size", c.hidden_size, 1 << 16);
  c.num_hidden_layers = positive(f, "num-layers", c.num_hidden_layers, 1024);
  c.num_attention_heads = positive(f, "num-heads", c.num_attention_heads, 1024);
  c.num_key_value_heads = positive(f, "num-kv-heads", c.num_key_value_heads, 1024);
  c.head_dim = positive(f, "head-dim", c.head_dim, 4096);
  c.intermediate_size = positive(f, "intermediate-size", c.intermediate_size, 1 << 18);
  c.max_position_embeddings = std::max(c.max_position_embeddings, o.max_seq_len);
  if (c.num_attention_heads % c.num_key_value_heads != 0) {
    throw UsageError("--num-heads must be a multiple of --num-kv-heads");
  }
  if (c.head_dim % 2 != 0) throw UsageError("--head-dim must be even (RoPE rotates pairs)");
  if (f.has("threads")) at::set_num_threads(positive(f, "threads", 1, 1024));

  const TrainRunResult r = run_train_tiny(o, std::cout);
  std::printf(
      "train-tiny: done: %lld steps, final loss %.4f, %.0f s, exported model exact on "
      "%lld/%lld checked questions\n",
      static_cast<long long>(r.steps), r.final_loss, r.seconds,
      static_cast<long long>(r.checked_exact), static_cast<long long>(r.checked));
  return 0;
}

}  // namespace ps
