#include "tokenizer/post_processor.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tokenizer/json_steps.h"

namespace ps {
namespace {

using json_steps::fail;
using json_steps::type_of;

// Reads TemplateProcessing's "single" template into prefix/suffix ids.
void read_template(const nlohmann::json& j, const std::string& origin, const std::string& where,
                   std::vector<int32_t>& prefix, std::vector<int32_t>& suffix) {
  const auto& single = j.value("single", nlohmann::json());
  if (!single.is_array()) fail(origin, where + " (TemplateProcessing) needs a \"single\" array");
  const auto& specials = j.value("special_tokens", nlohmann::json::object());
  if (!specials.is_object()) fail(origin, where + ".special_tokens must be an object");
  bool seen_sequence = false;
  for (size_t i = 0; i < single.size(); ++i) {
    const auto& piece = single[i];
    std::string at = where + ".single[" + std::to_string(i) + "]";
    if (piece.is_object() && piece.contains("Sequence")) {
      const auto& seq = piece["Sequence"];
      if (!seq.is_object() || seq.value("id", std::string()) != "A" || seen_sequence) {
        fail(origin, at + ": the single template must hold the sequence $A exactly once");
      }
      seen_sequence = true;
    } else if (piece.is_object() && piece.contains("SpecialToken") &&
               piece["SpecialToken"].is_object() && piece["SpecialToken"].contains("id") &&
               piece["SpecialToken"]["id"].is_string()) {
      std::string name = piece["SpecialToken"]["id"].get<std::string>();
      if (!specials.contains(name) || !specials[name].is_object() ||
          !specials[name].contains("ids") || !specials[name]["ids"].is_array()) {
        fail(origin, at + " names special token \"" + name +
                         "\", which special_tokens does not define with its \"ids\"");
      }
      for (const auto& id : specials[name]["ids"]) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
          fail(origin, where + ".special_tokens[\"" + name + "\"].ids must be token ids");
        }
        (seen_sequence ? suffix : prefix).push_back(id.get<int32_t>());
      }
    } else {
      fail(origin, at + " must be {\"Sequence\": ...} or {\"SpecialToken\": {\"id\": ...}}");
    }
  }
  if (!seen_sequence) fail(origin, where + ".single has no {\"Sequence\": {\"id\": \"A\"}}");
}

}  // namespace

PostProcessor PostProcessor::from_json(const nlohmann::json& post_processor,
                                       const std::string& origin) {
  PostProcessor result;
  if (post_processor.is_null()) return result;
  bool have_template = false;
  for (const auto& [j, where] :
       json_steps::leaves(post_processor, "post_processor", "processors", origin)) {
    const std::string type = type_of(*j);
    if (type == "ByteLevel") {
      // Only trims offsets; ids are unchanged.
    } else if (type == "TemplateProcessing") {
      if (have_template) fail(origin, where + ": more than one TemplateProcessing step");
      have_template = true;
      read_template(*j, origin, where, result.prefix_, result.suffix_);
    } else {
      fail(origin, where + " has type \"" + (type.empty() ? std::string("?") : type) +
                       "\", which is not supported (supported: TemplateProcessing, ByteLevel, "
                       "and Sequence of them)");
    }
  }
  return result;
}

PostProcessor PostProcessor::from_flags(bool add_bos, std::optional<int32_t> bos, bool add_eos,
                                        std::optional<int32_t> eos, const std::string& origin) {
  PostProcessor result;
  if (add_bos) {
    if (!bos) fail(origin, "add_bos_token is true but bos_token is not set or not in the vocab");
    result.prefix_.push_back(*bos);
  }
  if (add_eos) {
    if (!eos) fail(origin, "add_eos_token is true but eos_token is not set or not in the vocab");
    result.suffix_.push_back(*eos);
  }
  return result;
}

void PostProcessor::apply(std::vector<int32_t>& ids) const {
  if (!prefix_.empty()) ids.insert(ids.begin(), prefix_.begin(), prefix_.end());
  ids.insert(ids.end(), suffix_.begin(), suffix_.end());
}

}  // namespace ps
