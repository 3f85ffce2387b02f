#include "checkpoint/tiny_model.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "checkpoint/random_weights.h"
#include "checkpoint/safetensors_writer.h"
#include "checkpoint/stored_tensors.h"
#include "model/model_weights.h"
#include "tokenizer/bpe_trainer.h"

namespace ps {
namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

// The trainer puts the special tokens first, in this order.
constexpr const char* kEndOfText = "<|endoftext|>";  // id 0, also padding
constexpr const char* kImStart = "<|im_start|>";     // id 1
constexpr const char* kImEnd = "<|im_end|>";         // id 2, ends an assistant turn
constexpr int32_t kSpecialCount = 3;

// ChatML as Qwen models use it, so external tools can format chats for this checkpoint.
constexpr const char* kChatTemplate =
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

const char* torch_dtype_name(WeightDtype d) {
  switch (d) {
    case WeightDtype::kBF16:
      return "bfloat16";
    case WeightDtype::kF16:
      return "float16";
    case WeightDtype::kF32:
      break;
  }
  return "float32";
}

std::string shard_name(int32_t i, int32_t n) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "model-%05d-of-%05d.safetensors", i + 1, n);
  return buf;
}

// Contiguous runs of tensors, about equal in bytes, none empty.
std::vector<size_t> shard_starts(const std::vector<SafetensorsEntry>& entries, int32_t shards) {
  uint64_t total = 0;
  for (const SafetensorsEntry& e : entries) total += e.data.size();
  const size_t n = entries.size();
  const size_t k = static_cast<size_t>(shards);
  std::vector<size_t> starts;
  size_t i = 0;
  uint64_t before = 0;  // bytes in entries [0, i)
  for (size_t s = 0; s < k; ++s) {
    starts.push_back(i);
    before += entries[i++].data.size();
    // Take more while the next tensor's middle falls in this shard's byte range and enough
    // tensors remain for the shards after it.
    while (i < n && n - i > k - 1 - s &&
           (before + entries[i].data.size() / 2) * k <= total * (s + 1)) {
      before += entries[i++].data.size();
    }
  }
  return starts;
}

ordered_json tokenizer_config(const ModelConfig& c) {
  ordered_json added = ordered_json::object();
  const char* specials[] = {kEndOfText, kImStart, kImEnd};
  for (int32_t id = 0; id < kSpecialCount; ++id) {
    added[std::to_string(id)] = {{"content", specials[id]}, {"lstrip", false},
                                 {"normalized", false},     {"rstrip", false},
                                 {"single_word", false},    {"special", true}};
  }
  return {{"add_bos_token", false},
          {"add_prefix_space", false},
          {"added_tokens_decoder", added},
          {"bos_token", kImStart},
          {"eos_token", kImEnd},
          {"pad_token", kEndOfText},
          {"unk_token", nullptr},
          {"chat_template", kChatTemplate},
          {"clean_up_tokenization_spaces", false},
          {"model_max_length", c.max_position_embeddings},
          {"tokenizer_class", "PreTrainedTokenizerFast"}};
}

void write_weights(const fs::path& dir, const ModelConfig& c, const TinyModelOptions& o) {
  const DType st = o.dtype == WeightDtype::kBF16  ? DType::bf16
                   : o.dtype == WeightDtype::kF16 ? DType::f16
                                                  : DType::f32;
  ModelWeights w = make_random_weights(c, o.seed, st);
  const std::vector<StoredTensor> stored = stored_tensors(w, st);
  const std::vector<SafetensorsEntry> entries = safetensors_entries(stored);
  const std::map<std::string, std::string> metadata = {{"format", "pt"}};

  // Remove the other layout's files: the loader prefers model.safetensors when both exist.
  std::error_code ec;
  if (o.shards == 1) {
    fs::remove(dir / "model.safetensors.index.json", ec);
    write_safetensors_file((dir / "model.safetensors").string(), entries, metadata);
    return;
  }
  fs::remove(dir / "model.safetensors", ec);
  const std::vector<size_t> starts = shard_starts(entries, o.shards);
  ordered_json weight_map = ordered_json::object();
  uint64_t total = 0;
  for (size_t s = 0; s < starts.size(); ++s) {
    const size_t end = s + 1 < starts.size() ? starts[s + 1] : entries.size();
    const std::vector<SafetensorsEntry> part(
        entries.begin() + static_cast<std::ptrdiff_t>(starts[s]),
        entries.begin() + static_cast<std::ptrdiff_t>(end));
    const std::string name = shard_name(static_cast<int32_t>(s), o.shards);
    write_safetensors_file((dir / name).string(), part, metadata);
    for (const SafetensorsEntry& e : part) {
      weight_map[e.name] = name;
      total += e.data.size();
    }
  }
  const ordered_json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
  write_text(dir / "model.safetensors.index.json", index.dump(2) + "\n");
}

}  // namespace

void write_tiny_model(const std::string& dir_name, const TinyModelOptions& options) {
  ModelConfig c = options.config;
  if (c.eos_token_ids.empty()) c.eos_token_ids = {2, 0};  // <|im_end|>, <|endoftext|>
  if (c.bos_token_id < 0) c.bos_token_id = 1;             // <|im_start|>
  c.tie_word_embeddings_stated = true;
  c.validate("make-tiny-model");
  // Special tokens and all 256 bytes must fit, or the tokenizer cannot encode arbitrary text.
  if (c.vocab_size < kSpecialCount + 256) {
    throw std::runtime_error("make-tiny-model: vocab_size " + std::to_string(c.vocab_size) +
                             " is below the " + std::to_string(kSpecialCount + 256) +
                             " ids the special and byte tokens take");
  }
  for (int32_t id : c.eos_token_ids) {
    if (id < 0 || id >= c.vocab_size) {
      throw std::runtime_error("make-tiny-model: eos id " + std::to_string(id) + " out of range");
    }
  }
  if (options.shards < 1) {
    throw std::runtime_error("make-tiny-model: --shards must be at least 1");
  }
  // phi3: qkv_proj and gate_up_proj fused; gpt_oss: norms 2, attention 4 + 4 biases + sinks,
  // router 2, experts 6.
  const int32_t per_layer = c.gpt_oss() ? 19
                                        : (c.model_type == "phi3" ? 6 : 9) +
                                              (c.attention_bias ? 3 : 0) + (c.qk_norm ? 2 : 0);
  const int32_t tensor_count =
      2 + (c.tie_word_embeddings ? 0 : 1) + c.num_hidden_layers * per_layer;
  if (options.shards > tensor_count) {
    throw std::runtime_error("make-tiny-model: " + std::to_string(options.shards) +
                             " shards for only " + std::to_string(tensor_count) + " tensors");
  }

  const fs::path dir(dir_name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir_name + ": cannot create directory: " + ec.message());

  ordered_json config = ordered_json::parse(c.to_json());
  config["torch_dtype"] = torch_dtype_name(options.dtype);
  write_text(dir / "config.json", config.dump(2) + "\n");
  const ordered_json generation = {
      {"bos_token_id", c.bos_token_id}, {"eos_token_id", c.eos_token_ids}, {"do_sample", false}};
  write_text(dir / "generation_config.json", generation.dump(2) + "\n");

  BpeTrainOptions bpe;
  bpe.vocab_size = c.vocab_size;
  write_text(dir / "tokenizer.json", train_byte_level_bpe(tiny_model_corpus(), bpe));
  write_text(dir / "tokenizer_config.json", tokenizer_config(c).dump(2) + "\n");

  write_weights(dir, c, options);
}

}  // namespace ps
