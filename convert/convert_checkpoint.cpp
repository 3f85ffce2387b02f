#include "convert/convert_checkpoint.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "convert/convert_moe.h"
#include "convert/convert_names.h"
#include "convert/convert_pth_reader.h"
#include "convert/convert_writer.h"
#include "model/model_weights.h"
#include "model/shape_string.h"

namespace ps {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": invalid JSON: " + e.what());
  }
}

template <typename T>
void read_field(const json& j, std::initializer_list<const char*> keys, std::optional<T>* out,
                const std::string& path) {
  for (const char* k : keys) {
    if (!j.contains(k) || j.at(k).is_null()) continue;
    try {
      *out = j.at(k).get<T>();
    } catch (const json::exception&) {
      throw std::runtime_error(path + ": field \"" + k +
                               "\" has the wrong type: " + j.at(k).dump());
    }
    return;
  }
}

struct Source {
  std::string name;  // as stored in the .pth
  Tensor tensor;
};

// The id of a special token named in tokenizer_config.json, looked up in tokenizer.json.
std::optional<int32_t> special_token_id(const json& tok_config, const json& tokenizer,
                                        const char* field) {
  if (!tok_config.contains(field)) return std::nullopt;
  const json& v = tok_config.at(field);
  std::string content;
  if (v.is_string())
    content = v.get<std::string>();
  else if (v.is_object() && v.contains("content") && v.at("content").is_string())
    content = v.at("content").get<std::string>();
  if (content.empty()) return std::nullopt;
  if (tokenizer.contains("added_tokens") && tokenizer.at("added_tokens").is_array()) {
    for (const json& t : tokenizer.at("added_tokens")) {
      if (t.value("content", "") == content && t.contains("id")) return t.at("id").get<int32_t>();
    }
  }
  if (tokenizer.contains("model") && tokenizer.at("model").contains("vocab") &&
      tokenizer.at("model").at("vocab").is_object() &&
      tokenizer.at("model").at("vocab").contains(content)) {
    return tokenizer.at("model").at("vocab").at(content).get<int32_t>();
  }
  return std::nullopt;
}

// Maps the state_dict, infers the config where `given` is silent, and fills ModelWeights.
// Every problem is collected, so one run names all of them.
ModelWeights build_weights(const NamedTensors& state_dict, const ShapeOverrides& given,
                           const std::string& origin, std::vector<std::string>* ignored,
                           std::vector<std::string>* notes) {
  std::vector<std::string> problems;
  std::map<std::string, Source> by_hf;
  for (const auto& [name, tensor] : state_dict) {
    const MappedName m = map_tensor_name(name);
    if (m.kind == MappedName::Kind::kIgnored) {
      ignored->push_back(name);
      continue;
    }
    if (m.kind == MappedName::Kind::kUnknown) {
      problems.push_back("unknown tensor '" + name + "' " + shape_string(tensor.sizes()) +
                         " (not a Llama/Qwen/MiniMind decoder tensor; vision weights are not "
                         "supported)");
      continue;
    }
    auto [it, fresh] = by_hf.emplace(m.hf, Source{name, tensor});
    if (!fresh) {
      problems.push_back("tensors '" + it->second.name + "' and '" + name + "' both map to " +
                         m.hf);
    }
  }
  auto find = [&](const std::string& hf) -> const Source* {
    const auto it = by_hf.find(hf);
    return it == by_hf.end() ? nullptr : &it->second;
  };
  auto rows = [&](const std::string& hf, int dim) -> std::optional<int32_t> {
    const Source* s = find(hf);
    if (s == nullptr || s->tensor.dim() <= dim) return std::nullopt;
    return static_cast<int32_t>(s->tensor.size(dim));
  };
  auto fail_all = [&]() {
    std::string msg = origin + ": cannot convert (nothing was written):";
    for (const std::string& p : problems) msg += "\n  " + p;
    throw std::runtime_error(msg);
  };

  ModelConfig c;
  const std::string l0 = "model.layers.0.";
  std::string type = given.model_type.value_or("");
  if (type.empty()) {
    type = find(l0 + "self_attn.q_norm.weight") ? "qwen3"
           : find(l0 + "self_attn.q_proj.bias") ? "qwen2"
                                                : "llama";
  }
  c.set_model_type(type);
  const std::string embed =
      find("model.embed_tokens.weight") ? "model.embed_tokens.weight" : "lm_head.weight";
  int32_t layers = 0;
  for (const auto& [hf, src] : by_hf) {
    if (hf.rfind("model.layers.", 0) == 0) layers = std::max(layers, std::stoi(hf.substr(13)) + 1);
  }
  auto pick = [&](const std::optional<int32_t>& flag, std::optional<int32_t> inferred,
                  int32_t fallback) { return flag ? *flag : inferred.value_or(fallback); };
  c.vocab_size = pick(given.vocab_size, rows(embed, 0), c.vocab_size);
  c.hidden_size = pick(given.hidden_size, rows(embed, 1), c.hidden_size);
  c.num_hidden_layers = pick(given.num_hidden_layers, layers ? std::optional(layers) : std::nullopt,
                             c.num_hidden_layers);
  c.intermediate_size =
      pick(given.intermediate_size, rows(l0 + "mlp.gate_proj.weight", 0), c.intermediate_size);
  // head_dim: explicit, else the q_norm width (qwen3), else hidden / heads when heads are given.
  std::optional<int32_t> head_dim = given.head_dim;
  if (!head_dim) head_dim = rows(l0 + "self_attn.q_norm.weight", 0);
  const std::optional<int32_t> q_rows = rows(l0 + "self_attn.q_proj.weight", 0);
  if (!head_dim && given.num_attention_heads && q_rows && *given.num_attention_heads > 0) {
    head_dim = *q_rows / *given.num_attention_heads;
  }
  if (!head_dim) {
    problems.push_back(
        "cannot tell the head count from the tensors (no q_norm): pass "
        "--num-heads and --num-kv-heads (or --head-dim), or put a config.json "
        "next to the .pth");
    fail_all();
  }
  c.head_dim = *head_dim;
  std::optional<int32_t> heads, kv_heads;
  if (q_rows && c.head_dim > 0) heads = *q_rows / c.head_dim;
  if (auto k = rows(l0 + "self_attn.k_proj.weight", 0); k && c.head_dim > 0)
    kv_heads = *k / c.head_dim;
  c.num_attention_heads = pick(given.num_attention_heads, heads, c.num_attention_heads);
  c.num_key_value_heads = pick(given.num_key_value_heads, kv_heads, c.num_key_value_heads);
  if (given.max_position_embeddings) c.max_position_embeddings = *given.max_position_embeddings;
  if (given.rope_theta) c.rope_theta = *given.rope_theta;
  if (given.rms_norm_eps) c.rms_norm_eps = *given.rms_norm_eps;
  if (given.eos_token_ids) c.eos_token_ids = *given.eos_token_ids;
  if (given.bos_token_id) c.bos_token_id = *given.bos_token_id;
  std::set<std::string> names;
  for (const auto& [hf, src] : by_hf) names.insert(hf);
  infer_moe_config(names, rows, given, &c, notes, &problems);

  // Tied when there is no lm_head, or it holds the embedding's values (MiniMind ties
  // output.weight to tok_embeddings.weight, and torch.save stores both names).
  const Source* head = find("lm_head.weight");
  const Source* emb = find("model.embed_tokens.weight");
  const bool same =
      head && emb && head->tensor.sizes() == emb->tensor.sizes() &&
      head->tensor.dtype() == emb->tensor.dtype() &&
      std::memcmp(head->tensor.data_ptr(), emb->tensor.data_ptr(), head->tensor.nbytes()) == 0;
  c.tie_word_embeddings = given.tie_word_embeddings.value_or(head == nullptr || same);
  if (c.tie_word_embeddings && head && emb && !same) {
    problems.push_back("'" + head->name + "' differs from '" + emb->name +
                       "' but tie_word_embeddings is true; drop the tie setting or the tensor");
  }
  c.tie_word_embeddings_stated = true;
  try {
    c.validate(origin);
  } catch (const std::runtime_error& e) {
    problems.push_back(std::string(e.what()) + " (check the shape flags / config file)");
    fail_all();
  }

  ModelWeights w;
  w.config = c;
  std::set<std::string> used;
  for (const WeightSlot& slot : weight_slots(w)) {
    const Source* s = find(slot.name);
    if (s == nullptr) {
      problems.push_back("missing tensor " + slot.name + " " + shape_string(slot.shape) +
                         " (MiniMind name: " + minimind_name(slot.name) + "), which model_type " +
                         c.model_type + " needs");
      continue;
    }
    used.insert(slot.name);
    if (s->tensor.sizes() != slot.shape) {
      problems.push_back("tensor '" + s->name + "' (" + slot.name + ") has shape " +
                         shape_string(s->tensor.sizes()) + " but the config implies " +
                         shape_string(slot.shape));
      continue;
    }
    const DType st = s->tensor.dtype();
    if (st != DType::f32 && st != DType::bf16 && st != DType::f16 && st != DType::f64) {
      problems.push_back("tensor '" + s->name + "' is not floating point");
      continue;
    }
    *slot.tensor = s->tensor.to(DType::f32);
  }
  for (const auto& [hf, src] : by_hf) {
    if (used.count(hf) || (hf == "lm_head.weight" && c.tie_word_embeddings)) continue;
    problems.push_back("unexpected tensor '" + src.name + "' (" + hf + "): model_type " +
                       c.model_type + " with " + std::to_string(c.num_hidden_layers) +
                       " layers has no such tensor");
  }
  if (!problems.empty()) fail_all();
  if (c.tie_word_embeddings) w.lm_head = w.embed_tokens;
  return w;
}

}  // namespace

void ShapeOverrides::apply(const ShapeOverrides& o) {
  auto set = [](auto& mine, const auto& theirs) {
    if (theirs) mine = theirs;
  };
  set(model_type, o.model_type);
  set(hidden_size, o.hidden_size);
  set(num_hidden_layers, o.num_hidden_layers);
  set(num_attention_heads, o.num_attention_heads);
  set(num_key_value_heads, o.num_key_value_heads);
  set(head_dim, o.head_dim);
  set(intermediate_size, o.intermediate_size);
  set(vocab_size, o.vocab_size);
  set(max_position_embeddings, o.max_position_embeddings);
  set(bos_token_id, o.bos_token_id);
  set(rope_theta, o.rope_theta);
  set(rms_norm_eps, o.rms_norm_eps);
  set(tie_word_embeddings, o.tie_word_embeddings);
  set(eos_token_ids, o.eos_token_ids);
  set(num_experts_per_tok, o.num_experts_per_tok);
  set(norm_topk_prob, o.norm_topk_prob);
}

ShapeOverrides ShapeOverrides::from_config_file(const std::string& path) {
  const json j = read_json(path);
  if (!j.is_object()) throw std::runtime_error(path + ": expected a JSON object");
  ShapeOverrides s;
  std::optional<std::string> type;
  read_field(j, {"model_type"}, &type, path);
  if (type && (*type == "qwen3" || *type == "qwen2" || *type == "llama" || *type == "mistral" ||
               *type == "qwen3_moe")) {
    s.model_type = type;
  }
  read_field(j, {"hidden_size", "dim"}, &s.hidden_size, path);
  read_field(j, {"num_hidden_layers", "n_layers"}, &s.num_hidden_layers, path);
  read_field(j, {"num_attention_heads", "n_heads"}, &s.num_attention_heads, path);
  read_field(j, {"num_key_value_heads", "n_kv_heads"}, &s.num_key_value_heads, path);
  read_field(j, {"head_dim"}, &s.head_dim, path);
  read_field(j, {"intermediate_size", "hidden_dim"}, &s.intermediate_size, path);
  read_field(j, {"vocab_size"}, &s.vocab_size, path);
  read_field(j, {"max_position_embeddings", "max_seq_len"}, &s.max_position_embeddings, path);
  read_field(j, {"rope_theta"}, &s.rope_theta, path);
  read_field(j, {"rms_norm_eps", "norm_eps"}, &s.rms_norm_eps, path);
  read_field(j, {"tie_word_embeddings"}, &s.tie_word_embeddings, path);
  read_field(j, {"bos_token_id"}, &s.bos_token_id, path);
  read_field(j, {"num_experts_per_tok"}, &s.num_experts_per_tok, path);
  read_field(j, {"norm_topk_prob"}, &s.norm_topk_prob, path);
  if (j.contains("eos_token_id") && !j.at("eos_token_id").is_null()) {
    const json& e = j.at("eos_token_id");
    std::vector<int32_t> ids;
    if (e.is_array()) {
      for (const json& x : e) ids.push_back(x.get<int32_t>());
    } else {
      ids.push_back(e.get<int32_t>());
    }
    s.eos_token_ids = ids;
  }
  return s;
}

ConvertReport convert_checkpoint(const ConvertOptions& o) {
  const fs::path from(o.from);
  if (!fs::is_regular_file(from)) throw std::runtime_error("--from " + o.from + ": no such file");
  const fs::path pth_dir = from.has_parent_path() ? from.parent_path() : fs::path(".");
  ConvertReport report;

  // Config: the file (explicit, else config.json beside the .pth), then the flags on top.
  ShapeOverrides given;
  std::string config_file = o.config_file;
  if (config_file.empty() && fs::exists(pth_dir / "config.json")) {
    config_file = (pth_dir / "config.json").string();
  }
  report.config_source = "flags and tensor shapes";
  if (!config_file.empty()) {
    given = ShapeOverrides::from_config_file(config_file);
    report.config_source = config_file + ", flags and tensor shapes";
  }
  given.apply(o.flags);

  // Tokenizer: files beside the .pth, else --tokenizer DIR. Checked before any writing.
  const fs::path tok_dir = o.tokenizer_dir.empty() ? pth_dir : fs::path(o.tokenizer_dir);
  if (!fs::exists(tok_dir / "tokenizer.json")) {
    throw std::runtime_error((tok_dir / "tokenizer.json").string() + " not found: " +
                             (o.tokenizer_dir.empty()
                                  ? "put tokenizer.json (and tokenizer_config.json) next to the "
                                    ".pth or pass --tokenizer DIR"
                                  : "--tokenizer must name a directory holding tokenizer.json"));
  }
  std::vector<std::string> copy;
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                        "generation_config.json"}) {
    if (fs::exists(tok_dir / f)) copy.push_back((tok_dir / f).string());
  }
  if (!given.eos_token_ids || !given.bos_token_id) {
    // The ids of the special tokens tokenizer_config.json names, so generation stops at EOS.
    const fs::path tc = tok_dir / "tokenizer_config.json";
    if (fs::exists(tc)) {
      const json tok_config = read_json(tc.string());
      const json tokenizer = read_json((tok_dir / "tokenizer.json").string());
      if (!given.eos_token_ids) {
        if (auto id = special_token_id(tok_config, tokenizer, "eos_token"))
          given.eos_token_ids = {{*id}};
      }
      if (!given.bos_token_id)
        given.bos_token_id = special_token_id(tok_config, tokenizer, "bos_token");
    }
  }

  const NamedTensors state_dict = read_torch_state_dict(o.from);
  ModelWeights w = build_weights(state_dict, given, o.from, &report.ignored, &report.notes);

  std::string dtype = o.dtype;
  if (dtype == "auto") {
    const DType st = state_dict.front().second.dtype();
    dtype = st == DType::bf16 ? "bf16" : st == DType::f16 ? "f16" : "f32";
  }
  const WeightDtype wd = parse_weight_dtype(dtype, "--dtype");
  write_checkpoint(o.to, w, wd, copy);

  report.config = w.config;
  report.dtype = dtype;
  report.tensors = static_cast<int>(weight_slots(w).size());
  for (const std::string& f : copy) report.copied.push_back(fs::path(f).filename().string());
  return report;
}

}  // namespace ps
