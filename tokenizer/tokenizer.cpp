#include "tokenizer/tokenizer.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"

namespace ps {
namespace {

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw std::runtime_error(origin + ": " + what);
}

std::string type_of(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return "";
  return j["type"].get<std::string>();
}

// Only NFC may appear, and it is accepted without running it: our inputs (chat text from JSON
// clients, the project's own files) are taken to be NFC already. Text that is not NFC encodes to
// different (still valid, still round-tripping) ids than the reference library would give.
void check_normalizer(const nlohmann::json& normalizer, const std::string& origin) {
  if (normalizer.is_null()) return;
  std::string type = type_of(normalizer);
  if (type == "NFC") return;
  if (type == "Sequence" && normalizer.contains("normalizers") &&
      normalizer["normalizers"].is_array()) {
    for (const auto& inner : normalizer["normalizers"]) check_normalizer(inner, origin);
    return;
  }
  fail(origin, "normalizer \"" + type +
                   "\" is not supported (only null, or NFC which is assumed already applied)");
}

void check_decoder(const nlohmann::json& decoder, const std::string& origin) {
  std::string type = type_of(decoder);
  if (type != "ByteLevel") {
    fail(origin, "decoder is " + (decoder.is_null() ? std::string("null") : "\"" + type + "\"") +
                     "; only the ByteLevel decoder is supported");
  }
}

}  // namespace

struct Tokenizer::Impl {
  BpeModel bpe;
  PreTokenizer pre_tokenizer;
  AddedTokens added;
  StringMap<int32_t> token_ids;  // vocab spelling / added content -> id
  std::shared_ptr<std::vector<std::string>> bytes;
  std::shared_ptr<std::vector<bool>> special;

  void encode_plain(std::string_view text, std::vector<int32_t>& ids) const {
    std::string prefixed;
    if (pre_tokenizer.add_prefix_space() && text.front() != ' ') {
      prefixed.reserve(text.size() + 1);
      prefixed.push_back(' ');
      prefixed.append(text);
      text = prefixed;
    }
    std::vector<Regex::Span> pieces;
    pre_tokenizer.split(text, pieces);
    for (const Regex::Span& piece : pieces) {
      bpe.encode_word(text.substr(piece.begin, piece.end - piece.begin), ids);
    }
  }
};

Tokenizer Tokenizer::from_file(const std::string& tokenizer_json_path) {
  std::ifstream in(tokenizer_json_path, std::ios::binary);
  if (!in) {
    throw std::runtime_error(tokenizer_json_path +
                             ": cannot open tokenizer file (check the path and that the "
                             "checkpoint folder has a tokenizer.json)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return from_json_text(text.str(), tokenizer_json_path);
}

Tokenizer Tokenizer::from_json_text(const std::string& json_text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(origin, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object()) fail(origin, "top level must be a JSON object");
  if (!j.contains("model")) fail(origin, "has no \"model\" section; is this a tokenizer.json?");

  check_normalizer(j.value("normalizer", nlohmann::json()), origin);
  check_decoder(j.value("decoder", nlohmann::json()), origin);
  // post_processor is not read: encode() never adds BOS/EOS (like add_special_tokens=False);
  // chat templates write the special tokens they need into the text.

  auto impl = std::make_unique<Impl>(Impl{
      BpeModel::from_json(j["model"], origin),
      PreTokenizer::from_json(j.value("pre_tokenizer", nlohmann::json()), origin),
      AddedTokens::from_json(j.value("added_tokens", nlohmann::json()), origin),
      {},
      nullptr,
      nullptr,
  });

  int32_t max_id = impl->bpe.max_id();
  for (const AddedToken& t : impl->added.tokens()) max_id = std::max(max_id, t.id);
  auto bytes = std::make_shared<std::vector<std::string>>(static_cast<size_t>(max_id) + 1);
  auto special = std::make_shared<std::vector<bool>>(static_cast<size_t>(max_id) + 1, false);
  impl->token_ids.reserve(impl->bpe.vocab().size() + impl->added.tokens().size());
  for (const auto& [token, id] : impl->bpe.vocab()) {
    (*bytes)[id] = byte_level_decode(token);
    impl->token_ids.emplace(token, id);
  }
  for (const AddedToken& t : impl->added.tokens()) {
    (*bytes)[t.id] = t.content;
    (*special)[t.id] = t.special;
    impl->token_ids[t.content] = t.id;
  }
  impl->bytes = std::move(bytes);
  impl->special = std::move(special);
  return Tokenizer(std::move(impl));
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  for (const AddedTokens::Segment& segment : impl_->added.split(text)) {
    if (segment.token != nullptr) {
      ids.push_back(segment.token->id);
    } else {
      impl_->encode_plain(segment.text, ids);
    }
  }
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  const auto& bytes = *impl_->bytes;
  const auto& special = *impl_->special;
  std::string out;
  for (int32_t id : ids) {
    // Ids past the tokenizer (a model's padded embedding rows) have no text; skip them.
    if (id < 0 || static_cast<size_t>(id) >= bytes.size()) continue;
    if (skip_special_tokens && special[id]) continue;
    out += bytes[id];
  }
  return out;
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
