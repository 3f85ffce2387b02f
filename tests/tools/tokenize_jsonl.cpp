// Command-line face of the tokenizer for the cross-check against @huggingface/tokenizers
// (tests/e2e/tokenizer_crosscheck.sh):
//   tokenize_jsonl train OUT.json [--vocab N]     writes the tiny model's tokenizer.json
//   tokenize_jsonl encode TOKENIZER.json INPUTS   one JSON line per input:
//                                                 {"ids":[...],"text":...,"text_skip":...,
//                                                  "ids_special":[...]}
// (ids_special: encoded with add_special_tokens). TOKENIZER.json is read alone, without the
// tokenizer_config.json beside it, because the reference library reads it alone too.
// INPUTS holds one string per line; blank lines and lines starting with '#' are skipped, and
// \n \r \t \\ \u{HEX} are unescaped (tests/js/tokenizer_check.mjs applies the same rules).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "tokenizer/bpe_trainer.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"

namespace {

std::string unescape(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\' || i + 1 == line.size()) {
      out.push_back(line[i]);
      continue;
    }
    char c = line[i + 1];
    if (c == 'n') {
      out.push_back('\n');
    } else if (c == 'r') {
      out.push_back('\r');
    } else if (c == 't') {
      out.push_back('\t');
    } else if (c == '\\') {
      out.push_back('\\');
    } else if (c == 'u' && i + 2 < line.size() && line[i + 2] == '{' &&
               line.find('}', i + 3) != std::string::npos) {
      size_t close = line.find('}', i + 3);
      ps::append_utf8(
          out, static_cast<char32_t>(std::stoul(line.substr(i + 3, close - i - 3), nullptr, 16)));
      i = close;
      continue;
    } else {
      out.push_back('\\');
      out.push_back(c);
    }
    ++i;
  }
  return out;
}

int usage() {
  std::cerr << "usage: tokenize_jsonl train OUT.json [--vocab N]\n"
               "       tokenize_jsonl encode TOKENIZER.json INPUTS.txt\n";
  return 2;
}

int train(int argc, char** argv) {
  ps::BpeTrainOptions options;
  for (int i = 3; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--vocab" && i + 1 < argc) {
      options.vocab_size = std::stoi(argv[++i]);
    } else {
      return usage();
    }
  }
  auto start = std::chrono::steady_clock::now();
  std::string json = ps::train_byte_level_bpe(ps::tiny_model_corpus(), options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ofstream out(argv[2], std::ios::binary);
  out << json;
  if (!out) {
    std::cerr << argv[2] << ": cannot write the tokenizer file\n";
    return 1;
  }
  auto parsed = nlohmann::json::parse(json);
  std::cerr << "trained on " << ps::tiny_model_corpus().size() << " bytes in " << seconds
            << " s: vocab " << parsed["model"]["vocab"].size() << ", merges "
            << parsed["model"]["merges"].size() << "\n";
  return 0;
}

int encode(const char* tokenizer_path, const char* inputs_path) {
  std::ifstream file(tokenizer_path, std::ios::binary);
  if (!file) {
    std::cerr << tokenizer_path << ": cannot open the tokenizer file\n";
    return 1;
  }
  std::string json((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ps::Tokenizer tokenizer = ps::Tokenizer::from_json_text(json, tokenizer_path);
  std::ifstream in(inputs_path, std::ios::binary);
  if (!in) {
    std::cerr << inputs_path << ": cannot open the inputs file\n";
    return 1;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::string text = unescape(line);
    std::vector<int32_t> ids = tokenizer.encode(text);
    nlohmann::json row = {{"ids", ids},
                          {"text", tokenizer.decode(ids)},
                          {"text_skip", tokenizer.decode(ids, true)},
                          {"ids_special", tokenizer.encode(text, true)}};
    std::cout << row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 3 && std::string(argv[1]) == "train") return train(argc, argv);
    if (argc == 4 && std::string(argv[1]) == "encode") return encode(argv[2], argv[3]);
    return usage();
  } catch (const std::exception& e) {
    std::cerr << "tokenize_jsonl: " << e.what() << "\n";
    return 1;
  }
}
