#include "train/export_model.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "convert/convert_writer.h"
#include "model/model_weights.h"
#include "train/tiny_chat_template.h"

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

// make-tiny-model's tokenizer_config.json knows only ChatML and the three special tokens; the
// trained model's template handles tools and its tokenizer has <tool_call> and </tool_call>.
void write_tokenizer_config(const std::filesystem::path& path, const std::string& tokenizer_json) {
  using json = nlohmann::ordered_json;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot read");
  json config = json::parse(in);
  json added = json::object();
  const json tokenizer = json::parse(tokenizer_json);
  for (const json& t : tokenizer.at("added_tokens")) {
    added[std::to_string(t.at("id").get<int64_t>())] = {
        {"content", t.at("content")},
        {"lstrip", t.value("lstrip", false)},
        {"normalized", t.value("normalized", false)},
        {"rstrip", t.value("rstrip", false)},
        {"single_word", t.value("single_word", false)},
        {"special", t.value("special", false)}};
  }
  config["added_tokens_decoder"] = added;
  config["chat_template"] = tiny_chat_template_source();
  write_text(path, config.dump(2) + "\n");
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
  write_tokenizer_config(std::filesystem::path(dir) / "tokenizer_config.json", tokenizer_json);

  write_weights_safetensors((std::filesystem::path(dir) / "model.safetensors").string(), weights,
                            dtype);
}

}  // namespace ps
