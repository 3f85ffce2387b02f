// Bad tokenizer files fail at load with a message that names the file and what to fix.
#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/tokenizer/tokenizer_json_builder.h"
#include "tokenizer/tokenizer.h"

namespace ps {
namespace {

using test::JsonBuilder;

// Returns the error message of loading `json_text`, or "" if it loaded.
std::string load_error(const std::string& json_text, const std::string& origin = "x/tok.json") {
  try {
    Tokenizer::from_json_text(json_text, origin);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(TokenizerErrors, MissingFileNamesThePath) {
  const std::string path = "/nonexistent/dir/tokenizer.json";
  try {
    Tokenizer::from_file(path);
    FAIL() << "loading a missing file succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(TokenizerErrors, MalformedJson) {
  std::string message = load_error("{\"model\": {\"type\": \"BPE\",", "ckpt/tokenizer.json");
  EXPECT_NE(message.find("ckpt/tokenizer.json"), std::string::npos) << message;
  EXPECT_NE(message.find("malformed JSON"), std::string::npos) << message;
  EXPECT_NE(load_error("[1, 2]").find("x/tok.json"), std::string::npos);
  EXPECT_NE(load_error("{}").find("\"model\""), std::string::npos);
}

TEST(TokenizerErrors, UnknownModelType) {
  JsonBuilder b;
  b.model_type = "WordPiece";
  std::string message = load_error(b.build());
  EXPECT_NE(message.find("x/tok.json"), std::string::npos) << message;
  EXPECT_NE(message.find("WordPiece"), std::string::npos) << message;
}

TEST(TokenizerErrors, UnsupportedPreTokenizerIsNamed) {
  JsonBuilder b;
  b.pre_tokenizer = {{"type", "Whitespace"}};
  std::string message = load_error(b.build());
  EXPECT_NE(message.find("x/tok.json"), std::string::npos) << message;
  EXPECT_NE(message.find("Whitespace"), std::string::npos) << message;

  b.pre_tokenizer = {{"type", "Sequence"},
                     {"pretokenizers", {{{"type", "Digits"}, {"individual_digits", true}}}}};
  message = load_error(b.build());
  EXPECT_NE(message.find("Digits"), std::string::npos) << message;
  EXPECT_NE(message.find("pretokenizers[0]"), std::string::npos) << message;

  // Only Split steps may come before ByteLevel, and nothing after it.
  b.pre_tokenizer = {{"type", "Sequence"},
                     {"pretokenizers",
                      {{{"type", "ByteLevel"}, {"add_prefix_space", false}},
                       {{"type", "Split"}, {"pattern", {{"Regex", "a"}}}}}}};
  EXPECT_NE(load_error(b.build()).find("follows the ByteLevel step"), std::string::npos);
}

TEST(TokenizerErrors, BadRegexShowsPcreMessage) {
  JsonBuilder b;
  b.pre_tokenizer["pretokenizers"][0]["pattern"]["Regex"] = "(unclosed";
  std::string message = load_error(b.build());
  EXPECT_NE(message.find("x/tok.json"), std::string::npos) << message;
  EXPECT_NE(message.find("(unclosed"), std::string::npos) << message;
}

TEST(TokenizerErrors, UnsupportedNormalizerAndDecoder) {
  JsonBuilder b;
  b.normalizer = {{"type", "Lowercase"}};
  EXPECT_NE(load_error(b.build()).find("Lowercase"), std::string::npos);
  JsonBuilder d;
  d.decoder = {{"type", "WordPiece"}};
  EXPECT_NE(load_error(d.build()).find("decoder"), std::string::npos);
}

TEST(TokenizerErrors, MergeWithUnknownTokenNamesItsIndex) {
  JsonBuilder b;
  b.merges = {{"a", "b"}};
  nlohmann::json j = nlohmann::json::parse(b.build());
  j["model"]["merges"].push_back("zz q");
  std::string message = load_error(j.dump());
  EXPECT_NE(message.find("model.merges[1]"), std::string::npos) << message;

  j["model"]["merges"][1] = "abc";
  EXPECT_NE(load_error(j.dump()).find("model.merges[1]"), std::string::npos);
  j["model"]["merges"][1] = nlohmann::json::array({"a"});
  EXPECT_NE(load_error(j.dump()).find("model.merges[1]"), std::string::npos);
}

TEST(TokenizerErrors, VocabWithoutAllBytes) {
  nlohmann::json j = nlohmann::json::parse(JsonBuilder{}.build());
  j["model"]["vocab"].erase("Ġ");
  std::string message = load_error(j.dump());
  EXPECT_NE(message.find("0x20"), std::string::npos) << message;
}

TEST(TokenizerErrors, BadAddedTokens) {
  JsonBuilder b;
  nlohmann::json t = test::added(300, "<x>");
  t["single_word"] = true;
  b.added_tokens = {t};
  EXPECT_NE(load_error(b.build()).find("single_word"), std::string::npos);
  b.added_tokens = {{{"content", "<x>"}}};
  EXPECT_NE(load_error(b.build()).find("added_tokens[0]"), std::string::npos);
}

}  // namespace
}  // namespace ps
