#pragma once
// The "model" section of a BPE tokenizer.json: vocab, ranked merges and the merge loop that turns
// one pre-token into ids. Two alphabets: byte-level (GPT-2's, each raw byte is a symbol) and
// character-level (SentencePiece style: each UTF-8 character is a symbol; one the vocab lacks
// becomes its <0xNN> byte tokens with byte_fallback, else the unk token). Results are cached per
// pre-token, since natural text repeats the same words constantly.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ps {

// Lets maps keyed by std::string be searched with a std::string_view without a copy.
struct TransparentStringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, TransparentStringHash, std::equal_to<>>;

class BpeModel {
 public:
  // Throws std::runtime_error naming `origin` and the field (model.vocab, model.merges[i], ...).
  // `byte_level`: the pre-tokenizer has a ByteLevel step, so vocab strings spell raw bytes.
  static BpeModel from_json(const nlohmann::json& model, const std::string& origin,
                            bool byte_level);

  BpeModel();  // empty: no vocab, no merges
  BpeModel(BpeModel&&) noexcept;
  BpeModel& operator=(BpeModel&&) noexcept;
  ~BpeModel();

  // Appends the ids of one pre-token given as raw bytes (any bytes, not only UTF-8; in the
  // character-level alphabet a byte that starts no well-formed character is a symbol alone).
  void encode_word(std::string_view raw, std::vector<int32_t>& out) const;

  // Vocab-file spelling -> id, exactly as model.vocab lists it.
  const std::unordered_map<std::string, int32_t>& vocab() const { return vocab_; }
  int32_t max_id() const { return max_id_; }

 private:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  struct Cache;

  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }
  void merge_word(std::string_view raw, std::vector<int32_t>& out) const;
  // The character-level start symbols of `raw` (byte fallback and unk applied).
  void char_symbols(std::string_view raw, std::vector<int32_t>& ids) const;

  std::unordered_map<std::string, int32_t> vocab_;
  int32_t max_id_ = -1;
  bool byte_level_ = true;
  int32_t byte_ids_[256];  // byte-level: the symbol of each byte; char-level: its <0xNN> or -1
  bool byte_fallback_ = false;
  int32_t unk_id_ = -1;
  bool fuse_unk_ = false;
  std::unordered_map<uint64_t, Merge> merges_;  // (left id, right id) -> rank and merged id
  bool ignore_merges_ = false;
  StringMap<int32_t> raw_to_id_;  // only filled when ignore_merges_
  std::unique_ptr<Cache> cache_;
};

}  // namespace ps
