#include "tokenizer/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/decoder.h"
#include "tokenizer/json_steps.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/post_processor.h"
#include "tokenizer/pre_tokenizer.h"

namespace ps {
namespace {

using json_steps::fail;

std::string read_file(const std::string& path, const char* what_to_check) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open " + what_to_check);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// tokenizer_config.json writes a token as "<s>" or as {"content": "<s>", ...}.
std::optional<std::string> token_field(const nlohmann::json& config, const char* key,
                                       const std::string& origin) {
  if (!config.contains(key) || config[key].is_null()) return std::nullopt;
  const auto& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return v["content"].get<std::string>();
  }
  fail(origin, std::string(key) + " must be a string or an object with a string \"content\"");
}

std::optional<bool> bool_field(const nlohmann::json& config, const char* key,
                               const std::string& origin) {
  if (!config.contains(key) || config[key].is_null()) return std::nullopt;
  if (!config[key].is_boolean()) fail(origin, std::string(key) + " must be true or false");
  return config[key].get<bool>();
}

}  // namespace

TokenizerOptions TokenizerOptions::from_config_file(const std::string& path) {
  TokenizerOptions options;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return options;
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(read_file(path, "the tokenizer config"));
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, std::string("malformed JSON: ") + e.what());
  }
  if (!config.is_object()) fail(path, "top level must be a JSON object");
  options.add_bos_token = bool_field(config, "add_bos_token", path);
  options.add_eos_token = bool_field(config, "add_eos_token", path);
  options.bos_token = token_field(config, "bos_token", path);
  options.eos_token = token_field(config, "eos_token", path);
  options.split_special_tokens = bool_field(config, "split_special_tokens", path).value_or(false);
  return options;
}

struct Tokenizer::Impl {
  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
  BpeModel bpe;
  AddedTokens added;
  PostProcessor post_processor;
  Decoder decoder;
  StringMap<int32_t> token_ids;           // vocab spelling / added content -> id
  std::vector<Decoder::Token> spellings;  // id -> what the decoder starts from
  std::shared_ptr<std::vector<std::string>> bytes;
  std::shared_ptr<std::vector<bool>> special;

  // A plain section (no added token in it); `starts_input`: it begins the whole text.
  void encode_plain(std::string_view text, bool starts_input, std::vector<int32_t>& ids) const {
    std::string prepared;
    if (pre_tokenizer.rewrites()) {
      prepared = pre_tokenizer.prepare(text, starts_input);
      text = prepared;
    }
    std::vector<Regex::Span> pieces;
    pre_tokenizer.split(text, pieces);
    for (const Regex::Span& piece : pieces) {
      bpe.encode_word(text.substr(piece.begin, piece.end - piece.begin), ids);
    }
  }
};

Tokenizer Tokenizer::from_file(const std::string& tokenizer_json_path) {
  std::ifstream probe(tokenizer_json_path, std::ios::binary);
  if (!probe) {
    throw std::runtime_error(tokenizer_json_path +
                             ": cannot open tokenizer file (check the path and that the "
                             "checkpoint folder has a tokenizer.json)");
  }
  std::string text = read_file(tokenizer_json_path, "tokenizer file");
  std::filesystem::path config =
      std::filesystem::path(tokenizer_json_path).parent_path() / "tokenizer_config.json";
  return from_json_text(text, tokenizer_json_path,
                        TokenizerOptions::from_config_file(config.string()));
}

Tokenizer Tokenizer::from_json_text(const std::string& json_text, const std::string& origin,
                                    const TokenizerOptions& options) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(origin, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object()) fail(origin, "top level must be a JSON object");
  if (!j.contains("model")) fail(origin, "has no \"model\" section; is this a tokenizer.json?");

  auto impl = std::make_unique<Impl>();
  impl->normalizer = Normalizer::from_json(j.value("normalizer", nlohmann::json()), origin);
  impl->pre_tokenizer = PreTokenizer::from_json(j.value("pre_tokenizer", nlohmann::json()), origin);
  impl->bpe = BpeModel::from_json(j["model"], origin, impl->pre_tokenizer.byte_level());
  impl->added = AddedTokens::from_json(j.value("added_tokens", nlohmann::json()), origin);
  impl->added.prepare(impl->normalizer, options.split_special_tokens);
  impl->decoder = Decoder::from_json(j.value("decoder", nlohmann::json()), origin);

  int32_t max_id = impl->bpe.max_id();
  for (const AddedToken& t : impl->added.tokens()) max_id = std::max(max_id, t.id);
  const size_t n = static_cast<size_t>(max_id) + 1;
  auto bytes = std::make_shared<std::vector<std::string>>(n);
  auto special = std::make_shared<std::vector<bool>>(n, false);
  impl->spellings.assign(n, Decoder::Token{std::string(), false});
  impl->token_ids.reserve(impl->bpe.vocab().size() + impl->added.tokens().size());
  for (const auto& [token, id] : impl->bpe.vocab()) {
    impl->spellings[id] = {token, false};
    impl->token_ids.emplace(token, id);
  }
  for (const AddedToken& t : impl->added.tokens()) {
    impl->spellings[t.id] = {t.content, true};
    (*special)[t.id] = t.special;
    impl->token_ids[t.content] = t.id;
  }
  for (size_t id = 0; id < n; ++id) {
    (*bytes)[id] = impl->decoder.continuation_bytes(impl->spellings[id]);
  }
  impl->bytes = std::move(bytes);
  impl->special = std::move(special);

  if (options.add_bos_token.has_value() || options.add_eos_token.has_value()) {
    auto id_of = [&](const std::optional<std::string>& token) -> std::optional<int32_t> {
      if (!token) return std::nullopt;
      auto it = impl->token_ids.find(*token);
      if (it == impl->token_ids.end()) return std::nullopt;
      return it->second;
    };
    impl->post_processor =
        PostProcessor::from_flags(options.add_bos_token.value_or(false), id_of(options.bos_token),
                                  options.add_eos_token.value_or(false), id_of(options.eos_token),
                                  origin + " (tokenizer_config.json)");
  } else {
    impl->post_processor =
        PostProcessor::from_json(j.value("post_processor", nlohmann::json()), origin);
  }
  return Tokenizer(std::move(impl));
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  const Impl& m = *impl_;
  for (const AddedTokens::Segment& segment : m.added.split(text)) {
    if (segment.token != nullptr) {
      ids.push_back(segment.token->id);
      continue;
    }
    bool starts_input = segment.text.data() == text.data();
    if (m.normalizer.empty()) {
      // Normalized added tokens are then matched in the section as it is.
      for (const AddedTokens::Segment& sub :
           m.added.split(segment.text, AddedTokens::Pass::kNormalized)) {
        if (sub.token != nullptr) {
          ids.push_back(sub.token->id);
        } else {
          m.encode_plain(sub.text, starts_input && sub.text.data() == segment.text.data(), ids);
        }
      }
      continue;
    }
    std::string normalized = m.normalizer.apply(segment.text);
    for (const AddedTokens::Segment& sub :
         m.added.split(normalized, AddedTokens::Pass::kNormalized)) {
      if (sub.token != nullptr) {
        ids.push_back(sub.token->id);
      } else {
        m.encode_plain(sub.text, starts_input && sub.text.data() == normalized.data(), ids);
      }
    }
  }
  if (add_special_tokens) m.post_processor.apply(ids);
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  const auto& bytes = *impl_->bytes;
  const auto& special = *impl_->special;
  auto keep = [&](int32_t id) {
    // Ids past the tokenizer (a model's padded embedding rows) have no text; skip them.
    if (id < 0 || static_cast<size_t>(id) >= bytes.size()) return false;
    return !(skip_special_tokens && special[id]);
  };
  if (impl_->decoder.position_free()) {
    std::string out;
    for (int32_t id : ids) {
      if (keep(id)) out += bytes[id];
    }
    return out;
  }
  std::vector<Decoder::Token> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (keep(id)) tokens.push_back(impl_->spellings[id]);
  }
  return impl_->decoder.decode(std::move(tokens));
}

const std::string& Tokenizer::token_bytes(int32_t id) const {
  static const std::string kNone;
  if (id < 0 || static_cast<size_t>(id) >= impl_->bytes->size()) return kNone;
  return (*impl_->bytes)[id];
}

bool Tokenizer::is_special(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < impl_->special->size() && (*impl_->special)[id];
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  auto it = impl_->token_ids.find(token);
  if (it == impl_->token_ids.end()) return std::nullopt;
  return it->second;
}

int32_t Tokenizer::vocab_size() const {
  return static_cast<int32_t>(impl_->bytes->size());
}

std::shared_ptr<const std::vector<std::string>> Tokenizer::bytes_table() const {
  return impl_->bytes;
}

std::shared_ptr<const std::vector<bool>> Tokenizer::special_table() const {
  return impl_->special;
}

}  // namespace ps
