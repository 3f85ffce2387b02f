#pragma once
// Builds small tokenizer.json texts for tests. It spells bytes with its own copy of GPT-2's byte
// table (written from the published ranges, not taken from tokenizer/), so a mistake in the
// library's table cannot hide behind the same mistake here.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ps::test {

inline std::string codepoint_utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// '!'..'~', '¡'..'¬', '®'..'ÿ' spell themselves; the other 68 bytes take U+0100.. in byte order.
inline std::string spell_byte(unsigned char b) {
  auto keeps_itself = [](int x) {
    return (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE && x <= 0xFF);
  };
  if (keeps_itself(b)) return codepoint_utf8(b);
  char32_t shifted = 0x100;
  for (int x = 0; x < b; ++x) {
    if (!keeps_itself(x)) ++shifted;
  }
  return codepoint_utf8(shifted);
}

inline std::string spell(const std::string& raw) {
  std::string out;
  for (unsigned char c : raw) out += spell_byte(c);
  return out;
}

struct JsonBuilder {
  std::vector<std::pair<std::string, std::string>> merges;  // raw bytes of left, right
  std::vector<std::string> extra_vocab;                     // raw bytes, no merge makes them
  std::vector<nlohmann::json> added_tokens;
  nlohmann::json pre_tokenizer = nlohmann::json::parse(R"({
      "type": "Sequence", "pretokenizers": [
        {"type": "Split",
         "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         "behavior": "Isolated", "invert": false},
        {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false,
         "use_regex": false}]})");
  nlohmann::json normalizer = nullptr;
  nlohmann::json decoder = {{"type", "ByteLevel"}};
  std::string model_type = "BPE";
  bool pair_form = false;
  bool ignore_merges = false;

  // Byte b has id b; merges and extra vocab follow in order.
  std::string build() const {
    nlohmann::json vocab = nlohmann::json::object();
    int id = 0;
    for (int b = 0; b < 256; ++b) vocab[spell_byte(static_cast<unsigned char>(b))] = id++;
    nlohmann::json merge_list = nlohmann::json::array();
    for (const auto& [l, r] : merges) {
      if (!vocab.contains(spell(l + r))) vocab[spell(l + r)] = id++;
      if (pair_form) {
        merge_list.push_back({spell(l), spell(r)});
      } else {
        merge_list.push_back(spell(l) + " " + spell(r));
      }
    }
    for (const auto& raw : extra_vocab) vocab[spell(raw)] = id++;
    nlohmann::json j = {
        {"version", "1.0"},
        {"added_tokens", added_tokens},
        {"normalizer", normalizer},
        {"pre_tokenizer", pre_tokenizer},
        {"post_processor", nullptr},
        {"decoder", decoder},
        {"model",
         {{"type", model_type},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"ignore_merges", ignore_merges},
          {"vocab", vocab},
          {"merges", merge_list}}},
    };
    return j.dump();
  }
  // Id of a merged token: 256 + its merge index.
  static int merged_id(size_t merge_index) { return 256 + static_cast<int>(merge_index); }
};

inline nlohmann::json added(int id, const std::string& content, bool special = true) {
  return {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
          {"rstrip", false}, {"normalized", false}, {"special", special}};
}

}  // namespace ps::test
