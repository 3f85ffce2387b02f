#include "train/export_model.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "convert/convert_writer.h"
#include "model/model_weights.h"

namespace ps {
namespace {

void write_text(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error(tmp.string() + ": cannot write");
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

void export_model(const std::string& dir, const ModelWeights& weights,
                  const std::string& tokenizer_json, WeightDtype dtype) {
  // make-tiny-model owns the config/tokenizer_config/generation_config layout; reuse it whole
  // and replace its two random parts (weights and a tokenizer learned from another corpus).
  TinyModelOptions o;
  o.config = weights.config;
  o.dtype = dtype;
  write_tiny_model(dir, o);
  write_text(std::filesystem::path(dir) / "tokenizer.json", tokenizer_json);

  write_weights_safetensors((std::filesystem::path(dir) / "model.safetensors").string(), weights,
                            dtype);
}

}  // namespace ps
