#pragma once
// What the tokenizer.json readers (normalizer, pre-tokenizer, decoder, post-processor) share:
// their error form, a step's "type", and the flattening of nested {"type": "Sequence"} steps.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ps::json_steps {

// Throws std::runtime_error "<origin>: <what>": the file, then what in it is wrong.
[[noreturn]] void fail(const std::string& origin, const std::string& what);

// j["type"] when j is an object with a string type, else "".
std::string type_of(const nlohmann::json& j);

// The non-Sequence steps under `root`, in order, each with where it is ("decoder",
// "decoder.decoders[1]", ...). A Sequence's steps are under `list_key` ("decoders",
// "normalizers", "pretokenizers", "processors"); one without that array is an error.
std::vector<std::pair<const nlohmann::json*, std::string>> leaves(const nlohmann::json& root,
                                                                  const std::string& root_name,
                                                                  const char* list_key,
                                                                  const std::string& origin);

}  // namespace ps::json_steps
