// SentencePiece-style BPE (Llama 2 / Mistral / Gemma layout) piece by piece, on small hand-built
// files: normalizers, the Metaspace pre-tokenizer, byte fallback and unk, the decoders, the
// post-processor and tokenizer_config.json's flags, and the errors for what is not supported.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tokenizer/decoder.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace ps {
namespace {

using Ids = std::vector<int32_t>;
const std::string kMeta = "\xE2\x96\x81";  // ▁

// Ids: <unk> 0, <s> 1, </s> 2, <0x00>..<0xFF> 3..258, then `chars` in order, then one id per
// merge in order. The normalizer/pre-tokenizer/decoder are Llama 2's unless a test changes them.
struct SpBuilder {
  std::vector<std::string> chars = {kMeta, "a", "b", "c", "h", "e", "l", "o", "w", "r", "d"};
  std::vector<std::pair<std::string, std::string>> merges = {
      {kMeta, "h"},  {"e", "l"}, {"el", "l"},         {kMeta + "h", "ell"}, {kMeta + "hell", "o"},
      {kMeta, "w"},  {"o", "r"}, {kMeta + "w", "or"}, {"l", "d"},           {kMeta + "wor", "ld"},
      {kMeta, kMeta}};
  bool byte_fallback = true;
  bool fuse_unk = true;
  nlohmann::json unk_token = "<unk>";
  nlohmann::json normalizer = nlohmann::json::parse(R"({"type": "Sequence", "normalizers": [
      {"type": "Prepend", "prepend": "▁"},
      {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})");
  nlohmann::json pre_tokenizer = nullptr;
  nlohmann::json decoder = nlohmann::json::parse(R"({"type": "Sequence", "decoders": [
      {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
      {"type": "ByteFallback"}, {"type": "Fuse"},
      {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})");
  nlohmann::json post_processor = nlohmann::json::parse(R"({"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}})");
  std::string model_type = "BPE";

  nlohmann::json json() const {
    nlohmann::json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
    int id = 3;
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      vocab[name] = id++;
    }
    for (const auto& c : chars) vocab[c] = id++;
    nlohmann::json merge_list = nlohmann::json::array();
    for (const auto& [l, r] : merges) {
      if (!vocab.contains(l + r)) vocab[l + r] = id++;
      merge_list.push_back({l, r});
    }
    auto special = [](int i, const char* content) {
      return nlohmann::json{{"id", i},         {"content", content}, {"single_word", false},
                            {"lstrip", false}, {"rstrip", false},    {"normalized", false},
                            {"special", true}};
    };
    return {{"version", "1.0"},
            {"added_tokens", {special(0, "<unk>"), special(1, "<s>"), special(2, "</s>")}},
            {"normalizer", normalizer},
            {"pre_tokenizer", pre_tokenizer},
            {"post_processor", post_processor},
            {"decoder", decoder},
            {"model",
             {{"type", model_type},
              {"dropout", nullptr},
              {"unk_token", unk_token},
              {"fuse_unk", fuse_unk},
              {"byte_fallback", byte_fallback},
              {"vocab", vocab},
              {"merges", merge_list}}}};
  }
  Tokenizer build(const TokenizerOptions& options = {}) const {
    return Tokenizer::from_json_text(json().dump(), "sp/tokenizer.json", options);
  }
};

int32_t id_of(const Tokenizer& t, const std::string& token) {
  auto id = t.token_to_id(token);
  EXPECT_TRUE(id.has_value()) << token;
  return id.value_or(-1);
}

std::string load_error(const nlohmann::json& j, const TokenizerOptions& options = {}) {
  try {
    Tokenizer::from_json_text(j.dump(), "sp/tokenizer.json", options);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// ---- normalizers ----

Normalizer normalizer(const char* json) {
  return Normalizer::from_json(nlohmann::json::parse(json), "test");
}

TEST(Normalizer, PrependThenReplaceIsLlama2) {
  Normalizer n = SpBuilder{}.normalizer.is_null()
                     ? Normalizer()
                     : Normalizer::from_json(SpBuilder{}.normalizer, "test");
  EXPECT_EQ(n.apply("hello world"), kMeta + "hello" + kMeta + "world");
  EXPECT_EQ(n.apply(" x"), kMeta + kMeta + "x");
  EXPECT_EQ(n.apply(""), "");  // Prepend leaves empty text empty, as the reference does
}

TEST(Normalizer, ReplaceWithRegexAndOrderOfASequence) {
  Normalizer n = normalizer(R"({"type": "Sequence", "normalizers": [
      {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
      {"type": "Replace", "pattern": {"String": " "}, "content": "_"}]})");
  EXPECT_EQ(n.apply("a    b c"), "a_b_c");
  // Bytes that are not UTF-8 pass through; the runs around them are still normalized.
  EXPECT_EQ(n.apply("a  \xFF  b"), "a_\xFF_b");
}

TEST(Normalizer, UnicodeFormsRunThroughIcu) {
  EXPECT_EQ(normalizer(R"({"type": "NFC"})").apply("Cafe\xCC\x81"), "Caf\xC3\xA9");
  EXPECT_EQ(normalizer(R"({"type": "NFD"})").apply("Caf\xC3\xA9"), "Cafe\xCC\x81");
  EXPECT_EQ(normalizer(R"({"type": "NFKC"})").apply("\xEF\xAC\x81 \xEF\xBC\x91"), "fi 1");
  EXPECT_EQ(normalizer(R"({"type": "NFC"})")
                .apply("e\xCC\x81\xFE"
                       "e\xCC\x81"),
            "\xC3\xA9\xFE\xC3\xA9");
}

TEST(Normalizer, UnsupportedOrMalformedStepsAreNamed) {
  auto error = [](const char* json) -> std::string {
    try {
      normalizer(json);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error(R"({"type": "Lowercase"})").find("Lowercase"), std::string::npos);
  EXPECT_NE(
      error(R"({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Precompiled"}]})")
          .find("normalizer.normalizers[1]"),
      std::string::npos);
  EXPECT_NE(error(R"({"type": "Replace", "pattern": {"String": " "}})").find("content"),
            std::string::npos);
  EXPECT_NE(error(R"({"type": "Prepend"})").find("prepend"), std::string::npos);
}

// ---- Metaspace pre-tokenizer ----

std::vector<std::string> metaspace_pieces(const nlohmann::json& config, std::string_view text,
                                          bool starts_input) {
  PreTokenizer pre = PreTokenizer::from_json(config, "test");
  std::string prepared = pre.prepare(text, starts_input);
  std::vector<Regex::Span> spans;
  pre.split(prepared, spans);
  std::vector<std::string> out;
  for (const auto& s : spans) out.push_back(prepared.substr(s.begin, s.end - s.begin));
  return out;
}

TEST(Metaspace, PrependSchemes) {
  nlohmann::json j = {{"type", "Metaspace"}, {"replacement", kMeta}, {"split", false}};
  using P = std::vector<std::string>;
  j["prepend_scheme"] = "always";
  EXPECT_EQ(metaspace_pieces(j, "hi you", false), (P{kMeta + "hi" + kMeta + "you"}));
  j["prepend_scheme"] = "first";
  EXPECT_EQ(metaspace_pieces(j, "hi you", true), (P{kMeta + "hi" + kMeta + "you"}));
  EXPECT_EQ(metaspace_pieces(j, "hi you", false), (P{"hi" + kMeta + "you"}));
  EXPECT_EQ(metaspace_pieces(j, " hi", true), (P{kMeta + "hi"}));  // already starts with one
  j["prepend_scheme"] = "never";
  EXPECT_EQ(metaspace_pieces(j, "hi you", true), (P{"hi" + kMeta + "you"}));
  // Old files: add_prefix_space false means never.
  nlohmann::json old = {{"type", "Metaspace"}, {"replacement", kMeta}, {"add_prefix_space", false}};
  EXPECT_EQ(metaspace_pieces(old, "hi", true), (P{"hi"}));
}

TEST(Metaspace, SplitKeepsEachReplacementWithTheWordAfterIt) {
  nlohmann::json j = {{"type", "Metaspace"}, {"replacement", kMeta}, {"prepend_scheme", "always"}};
  using P = std::vector<std::string>;
  EXPECT_EQ(metaspace_pieces(j, "hi  you", true), (P{kMeta + "hi", kMeta, kMeta + "you"}));
}

TEST(Metaspace, BadConfigsAreErrors) {
  auto error = [](const nlohmann::json& j) -> std::string {
    try {
      PreTokenizer::from_json(j, "test");
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error({{"type", "Metaspace"}, {"prepend_scheme", "sometimes"}}).find("sometimes"),
            std::string::npos);
  EXPECT_NE(error({{"type", "Metaspace"}, {"replacement", "ab"}}).find("replacement"),
            std::string::npos);
  nlohmann::json late = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"}, {"pattern", {{"String", "x"}}}, {"behavior", "Isolated"}},
        {{"type", "Metaspace"}}}}};
  EXPECT_NE(error(late).find("first"), std::string::npos);
  EXPECT_NE(
      error({{"type", "Metaspace"}, {"prepend_scheme", "always"}, {"add_prefix_space", false}})
          .find("contradicts"),
      std::string::npos);
}

TEST(Metaspace, FirstMeansOnlyTheSectionThatStartsTheInput) {
  SpBuilder b;
  b.normalizer = nullptr;
  b.pre_tokenizer = {
      {"type", "Metaspace"}, {"replacement", kMeta}, {"prepend_scheme", "first"}, {"split", false}};
  Tokenizer t = b.build();
  int32_t hello = id_of(t, kMeta + "hello");
  // "hello" after <s> does not start the input: no ▁ is prepended, so it is spelled by pieces.
  Ids after_special = t.encode("<s>hello");
  ASSERT_FALSE(after_special.empty());
  EXPECT_EQ(after_special[0], 1);
  EXPECT_NE(after_special[1], hello);
  EXPECT_EQ(t.encode("hello"), (Ids{hello}));
  EXPECT_EQ(t.encode("hello</s>hello").front(), hello);
  EXPECT_NE(t.encode("hello</s>hello").back(), hello);
}

// ---- the BPE model: merges over characters, byte fallback, unk ----

TEST(SentencePieceBpe, Llama2StyleEncodeDecode) {
  Tokenizer t = SpBuilder{}.build();
  Ids ids = t.encode("hello world");
  EXPECT_EQ(ids, (Ids{id_of(t, kMeta + "hello"), id_of(t, kMeta + "world")}));
  EXPECT_EQ(t.decode(ids), "hello world");     // Strip removes the prepended space
  EXPECT_EQ(t.token_bytes(ids[0]), " hello");  // a continuation keeps it
  EXPECT_EQ(t.decode(t.encode(" hello")), " hello");
  // The normalizer runs per section, so a ▁ follows each special token (legacy Llama).
  EXPECT_EQ(t.encode("<s>hello"), (Ids{1, id_of(t, kMeta + "hello")}));
  EXPECT_EQ(t.decode(t.encode("<s>hello")), "<s> hello");
  EXPECT_EQ(t.decode(t.encode("<s>hello"), true), "hello");
}

TEST(SentencePieceBpe, UnknownCharactersFallBackToTheirBytes) {
  Tokenizer t = SpBuilder{}.build();
  // "你" is E4 BD A0; <0xNN> has id 3 + NN.
  Ids ids = t.encode("h你");
  EXPECT_EQ(ids, (Ids{id_of(t, kMeta + "h"), 3 + 0xE4, 3 + 0xBD, 3 + 0xA0}));
  EXPECT_EQ(t.decode(ids), "h你");
  EXPECT_EQ(t.token_bytes(3 + 0xE4), "\xE4");
  // A lone byte that is not UTF-8 is a symbol of its own and falls back to itself.
  EXPECT_EQ(t.encode("h\xFF"), (Ids{id_of(t, kMeta + "h"), 3 + 0xFF}));
  EXPECT_EQ(t.decode(t.encode("h\xFF")), "h\xFF");
}

TEST(SentencePieceBpe, WithoutByteFallbackUnknownsBecomeUnkFusedOrNot) {
  SpBuilder b;
  b.byte_fallback = false;
  Tokenizer fused = b.build();
  EXPECT_EQ(fused.encode("h你好h"), (Ids{id_of(fused, kMeta + "h"), 0, id_of(fused, "h")}));
  b.fuse_unk = false;
  Tokenizer unfused = b.build();
  EXPECT_EQ(unfused.encode("h你好h"),
            (Ids{id_of(unfused, kMeta + "h"), 0, 0, id_of(unfused, "h")}));
  b.unk_token = nullptr;
  Tokenizer dropping = b.build();  // no unk token: the reference drops the character
  EXPECT_EQ(dropping.encode("h你h"), (Ids{id_of(dropping, kMeta + "h"), id_of(dropping, "h")}));
  b.unk_token = "<nope>";
  EXPECT_NE(load_error(b.json()).find("<nope>"), std::string::npos);
}

TEST(SentencePieceBpe, IgnoreMergesTakesAWholeWordFromTheVocab) {
  nlohmann::json j = SpBuilder{}.json();
  j["model"]["vocab"][kMeta + "cab"] = 900;  // no merge builds it
  Tokenizer merging = Tokenizer::from_json_text(j.dump(), "test");
  EXPECT_EQ(merging.encode("cab"), (Ids{id_of(merging, kMeta), id_of(merging, "c"),
                                        id_of(merging, "a"), id_of(merging, "b")}));
  j["model"]["ignore_merges"] = true;
  Tokenizer whole = Tokenizer::from_json_text(j.dump(), "test");
  EXPECT_EQ(whole.encode("cab"), (Ids{900}));
  EXPECT_EQ(whole.encode("hello"), (Ids{id_of(whole, kMeta + "hello")}));
}

TEST(SentencePieceBpe, GemmaStyleNoPrependAndNoStrip) {
  SpBuilder b;
  b.normalizer = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kMeta}};
  b.pre_tokenizer = {
      {"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "MergedWithPrevious"}};
  b.decoder = nlohmann::json::parse(R"({"type": "Sequence", "decoders": [
      {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
      {"type": "ByteFallback"}, {"type": "Fuse"}]})");
  Tokenizer t = b.build();
  EXPECT_EQ(t.encode("hello world"),
            (Ids{id_of(t, "h"), id_of(t, "ell"), id_of(t, "o"), id_of(t, kMeta + "world")}));
  EXPECT_EQ(t.decode(t.encode(" hello")), " hello");
}

// ---- decoders ----

std::string decode_with(const char* json, std::vector<std::string> tokens) {
  Decoder d = Decoder::from_json(nlohmann::json::parse(json), "test");
  std::vector<Decoder::Token> in;
  for (auto& t : tokens) in.push_back({t, false});
  return d.decode(in);
}

TEST(Decoders, StripTrimsTheWholeTextAfterFuseAndEachTokenBefore) {
  const char* after = R"({"type": "Sequence", "decoders": [{"type": "Fuse"},
      {"type": "Strip", "content": " ", "start": 2, "stop": 1}]})";
  EXPECT_EQ(decode_with(after, {"   a", " b  "}), " a b ");
  const char* before = R"({"type": "Sequence", "decoders": [
      {"type": "Strip", "content": "x", "start": 1, "stop": 0}, {"type": "Fuse"}]})";
  EXPECT_EQ(decode_with(before, {"xa", "xxb"}), "axb");
}

TEST(Decoders, ByteFallbackJoinsRunsAndKeepsBadBytes) {
  const char* j =
      R"({"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]})";
  EXPECT_EQ(decode_with(j, {"<0xE4>", "<0xBD>", "<0xA0>", "x", "<0x41>"}), "你xA");
  EXPECT_EQ(decode_with(j, {"<0xE4>", "<0xBD>"}), "\xE4\xBD");  // kept for streaming to finish
  EXPECT_EQ(decode_with(j, {"<0xZZ>", "<0x4>"}), "<0xZZ><0x4>");
}

TEST(Decoders, MetaspaceDropsTheFirstTokensReplacements) {
  const char* j = R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"})";
  EXPECT_EQ(decode_with(j, {kMeta + "hi", kMeta + "you"}), "hi you");
  const char* never = R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never"})";
  EXPECT_EQ(decode_with(never, {kMeta + "hi", kMeta + "you"}), " hi you");
  Decoder d = Decoder::from_json(nlohmann::json::parse(j), "test");
  EXPECT_FALSE(d.position_free());
  EXPECT_EQ(d.continuation_bytes({kMeta + "hi", false}), " hi");
}

TEST(Decoders, UnsupportedDecodersAreNamed) {
  auto error = [](const char* json) -> std::string {
    try {
      Decoder::from_json(nlohmann::json::parse(json), "test");
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error(R"({"type": "WordPiece"})").find("WordPiece"), std::string::npos);
  EXPECT_NE(error(R"({"type": "Sequence", "decoders": [{"type": "CTC"}]})").find("decoders[0]"),
            std::string::npos);
  EXPECT_NE(error(R"({"type": "Replace", "pattern": {"Regex": "x"}, "content": ""})").find("Regex"),
            std::string::npos);
  EXPECT_NE(error(R"({"type": "Strip", "content": "ab", "start": 1})").find("one character"),
            std::string::npos);
  EXPECT_NE(error("null").find("decoder is null"), std::string::npos);
}

// ---- post-processor, tokenizer_config.json ----

TEST(PostProcessor, TemplateAddsBosOnlyWithAddSpecialTokens) {
  Tokenizer t = SpBuilder{}.build();
  int32_t hello = id_of(t, kMeta + "hello");
  EXPECT_EQ(t.encode("hello"), (Ids{hello}));
  EXPECT_EQ(t.encode("hello", true), (Ids{1, hello}));
  SpBuilder b;
  b.post_processor["single"].push_back({{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}});
  b.post_processor["special_tokens"]["</s>"] = {{"id", "</s>"}, {"ids", {2}}, {"tokens", {"</s>"}}};
  EXPECT_EQ(b.build().encode("hello", true), (Ids{1, hello, 2}));
}

TEST(PostProcessor, ConfigFlagsReplaceTheTemplate) {
  TokenizerOptions options;
  options.add_bos_token = false;
  options.add_eos_token = true;
  options.bos_token = "<s>";
  options.eos_token = "</s>";
  Tokenizer t = SpBuilder{}.build(options);
  int32_t hello = id_of(t, kMeta + "hello");
  EXPECT_EQ(t.encode("hello", true), (Ids{hello, 2}));
  EXPECT_EQ(t.encode("hello", false), (Ids{hello}));
  options.eos_token.reset();
  EXPECT_NE(load_error(SpBuilder{}.json(), options).find("add_eos_token"), std::string::npos);
}

TEST(PostProcessor, BadOrUnsupportedPostProcessorsAreNamed) {
  SpBuilder b;
  b.post_processor = {{"type", "RobertaProcessing"}};
  EXPECT_NE(load_error(b.json()).find("RobertaProcessing"), std::string::npos);
  b.post_processor = nlohmann::json::parse(R"({"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "special_tokens": {}})");
  EXPECT_NE(load_error(b.json()).find("<bos>"), std::string::npos);
  // Sequence[ByteLevel, TemplateProcessing] is Llama 3's layout.
  b.post_processor = {{"type", "Sequence"},
                      {"processors", {{{"type", "ByteLevel"}}, SpBuilder{}.post_processor}}};
  EXPECT_EQ(b.build().encode("hello", true).front(), 1);
}

TEST(TokenizerConfig, SplitSpecialTokensEncodesThemAsText) {
  TokenizerOptions options;
  options.split_special_tokens = true;
  Tokenizer t = SpBuilder{}.build(options);
  Ids ids = t.encode("<s>h");
  EXPECT_TRUE(std::find(ids.begin(), ids.end(), 1) == ids.end());
  EXPECT_EQ(t.decode(ids), "<s>h");
  EXPECT_EQ(SpBuilder{}.build().encode("<s>h").front(), 1);
}

TEST(TokenizerConfig, FromFileReadsTheConfigBesideIt) {
  char pattern[] = "/tmp/ps_sp_config_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  std::filesystem::path dir = pattern;
  std::ofstream(dir / "tokenizer.json") << SpBuilder{}.json().dump();
  std::ofstream(dir / "tokenizer_config.json")
      << R"({"add_bos_token": true, "add_eos_token": true, "bos_token": {"content": "<s>"},
             "eos_token": "</s>"})";
  Tokenizer t = Tokenizer::from_file((dir / "tokenizer.json").string());
  EXPECT_EQ(t.encode("hello", true), (Ids{1, id_of(t, kMeta + "hello"), 2}));

  std::ofstream(dir / "tokenizer_config.json") << R"({"add_bos_token": "yes"})";
  try {
    Tokenizer::from_file((dir / "tokenizer.json").string());
    ADD_FAILURE() << "a string add_bos_token loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer_config.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("add_bos_token"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(AddedTokens, NormalizedTokensMatchTheNormalizedText) {
  SpBuilder b;
  nlohmann::json j = b.json();
  // "a b" is a normalized added token: its content is normalized too ("▁a▁b", Prepend included)
  // and looked for in the normalized text.
  j["added_tokens"].push_back({{"id", 500},
                               {"content", "a b"},
                               {"special", false},
                               {"normalized", true},
                               {"lstrip", false},
                               {"rstrip", false},
                               {"single_word", false}});
  Tokenizer t = Tokenizer::from_json_text(j.dump(), "test");
  Ids ids = t.encode("c a b");
  EXPECT_EQ(ids, (Ids{id_of(t, kMeta), id_of(t, "c"), 500}));
  Ids no_match = t.encode("ca b");  // "▁ca▁b" holds no "▁a▁b"
  EXPECT_TRUE(std::find(no_match.begin(), no_match.end(), 500) == no_match.end());
}

// ---- model types that are refused ----

TEST(ModelType, UnigramAndWordPieceAreRefusedNamingTypeAndFile) {
  for (const char* type : {"Unigram", "WordPiece", "WordLevel"}) {
    SpBuilder b;
    b.model_type = type;
    std::string message = load_error(b.json());
    EXPECT_NE(message.find("sp/tokenizer.json"), std::string::npos) << message;
    EXPECT_NE(message.find(type), std::string::npos) << message;
    EXPECT_NE(message.find("not supported"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace ps
