#pragma once
// The pieces tiny_model_corpus() is assembled from: prose and code written for this project, and
// a deterministic generator that varies the same themes so the trainer sees enough repeats.
#include <string>
#include <string_view>

namespace ps::tiny_corpus {

std::string_view chinese_prose();
std::string_view english_prose();
std::string_view code_and_symbols();
// Entries "中文=English", separated by ';' and newlines.
std::string_view lexicon();
std::string generated_dialogue();
std::string generated_glossary();

}  // namespace ps::tiny_corpus
