#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tiny_corpus_parts.h"

namespace ps {

const std::string& tiny_model_corpus() {
  static const std::string corpus = [] {
    std::string text;
    text += tiny_corpus::chinese_prose();
    text += "\n";
    text += tiny_corpus::english_prose();
    text += "\n";
    text += tiny_corpus::code_and_symbols();
    text += "\n";
    text += tiny_corpus::generated_dialogue();
    text += tiny_corpus::generated_glossary();
    return text;
  }();
  return corpus;
}

}  // namespace ps
