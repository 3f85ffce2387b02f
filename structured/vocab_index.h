#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ps {

// The vocabulary as the matcher needs it, built once per GrammarCompiler and shared by every
// grammar it compiles: token bytes, which ids are EOS or special, and a byte trie of the
// tokens that grammars may produce (non-empty, not EOS), in preorder.
class VocabIndex {
 public:
  VocabIndex(std::shared_ptr<const std::vector<std::string>> token_bytes,
             std::vector<int32_t> eos_ids, std::vector<int32_t> special_ids);

  int32_t vocab_size() const { return static_cast<int32_t>(bytes_->size()); }
  size_t mask_words() const { return (bytes_->size() + 31) / 32; }
  const std::string& bytes(int32_t id) const { return (*bytes_)[id]; }
  bool is_eos(int32_t id) const { return flags_[id] & kEos; }
  bool is_special(int32_t id) const { return flags_[id] & kSpecial; }
  const std::vector<int32_t>& eos_ids() const { return eos_ids_; }
  const std::vector<int32_t>& special_ids() const { return special_ids_; }

  // Trie node i (preorder; node 0 is the root, the empty prefix): the byte that leads to it,
  // its depth, one past its subtree, and the tokens whose bytes end exactly there.
  size_t trie_size() const { return byte_.size(); }
  uint8_t trie_byte(size_t i) const { return byte_[i]; }
  uint32_t trie_depth(size_t i) const { return depth_[i]; }
  uint32_t trie_subtree_end(size_t i) const { return subtree_end_[i]; }
  const int32_t* trie_tokens_begin(size_t i) const { return tokens_.data() + token_begin_[i]; }
  const int32_t* trie_tokens_end(size_t i) const { return tokens_.data() + token_begin_[i + 1]; }
  // Tokens in trie (byte-lexicographic) order, and each one's rank in that order.
  const std::vector<int32_t>& trie_order() const { return tokens_; }
  uint32_t max_token_bytes() const { return max_len_; }

 private:
  static constexpr uint8_t kEos = 1, kSpecial = 2;
  std::shared_ptr<const std::vector<std::string>> bytes_;
  std::vector<int32_t> eos_ids_, special_ids_;
  std::vector<uint8_t> flags_;
  std::vector<uint8_t> byte_;
  std::vector<uint32_t> depth_, subtree_end_, token_begin_;
  std::vector<int32_t> tokens_;
  uint32_t max_len_ = 0;
};

}  // namespace ps
