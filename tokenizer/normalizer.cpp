#include "tokenizer/normalizer.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tokenizer/byte_level.h"
#include "tokenizer/json_steps.h"
#include "tokenizer/regex.h"

namespace ps {
namespace {

using json_steps::fail;
using json_steps::type_of;

// Calls fn(run, well_formed) for the maximal runs of well-formed and ill-formed UTF-8 in order.
template <typename Fn>
void for_each_run(std::string_view text, Fn&& fn) {
  size_t begin = 0;
  size_t pos = 0;
  bool good = true;
  while (pos < text.size()) {
    size_t len = utf8_sequence_length(text, pos);
    bool here = len > 0;
    if (here != good && pos > begin) {
      fn(text.substr(begin, pos - begin), good);
      begin = pos;
    }
    good = here;
    pos += here ? len : 1;
  }
  if (pos > begin) fn(text.substr(begin), good);
}

}  // namespace

struct Normalizer::Step {
  enum class Kind { kReplace, kPrepend, kUnicode } kind;
  std::string content;                        // Replace: replacement; Prepend: prefix
  std::string literal;                        // Replace with a String pattern
  std::unique_ptr<Regex> regex;               // Replace with a Regex pattern
  const icu::Normalizer2* unicode = nullptr;  // NFC, NFD, NFKC, NFKD

  std::string run(std::string_view text) const {
    switch (kind) {
      case Kind::kPrepend:
        // The reference prepends only to non-empty text.
        return text.empty() ? std::string() : content + std::string(text);
      case Kind::kReplace:
        return replace(text);
      case Kind::kUnicode: {
        std::string out;
        for_each_run(text, [&](std::string_view run, bool well_formed) {
          // ASCII is unchanged by every normalization form: skip ICU's two conversions.
          bool ascii = true;
          for (char c : run) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
          if (!well_formed || ascii) {
            out.append(run);
            return;
          }
          UErrorCode status = U_ZERO_ERROR;
          icu::UnicodeString normalized =
              unicode->normalize(icu::UnicodeString::fromUTF8(icu::StringPiece(
                                     run.data(), static_cast<int32_t>(run.size()))),
                                 status);
          if (U_FAILURE(status)) {
            throw std::runtime_error(std::string("tokenizer: Unicode normalization failed: ") +
                                     u_errorName(status));
          }
          normalized.toUTF8String(out);
        });
        return out;
      }
    }
    return std::string(text);
  }

  std::string replace(std::string_view text) const {
    std::string out;
    out.reserve(text.size());
    if (!regex) {
      size_t pos = 0;
      while (true) {
        size_t hit = text.find(literal, pos);
        if (hit == std::string_view::npos) break;
        out.append(text.substr(pos, hit - pos));
        out.append(content);
        pos = hit + literal.size();
      }
      out.append(text.substr(pos));
      return out;
    }
    for_each_run(text, [&](std::string_view run, bool well_formed) {
      if (!well_formed) {
        out.append(run);
        return;
      }
      std::vector<Regex::Span> matches;
      regex->find_all(run, 0, run.size(), matches);
      size_t prev = 0;
      for (const Regex::Span& m : matches) {
        out.append(run.substr(prev, m.begin - prev));
        out.append(content);
        prev = m.end;
      }
      out.append(run.substr(prev));
    });
    return out;
  }
};

Normalizer::Normalizer() = default;
Normalizer::Normalizer(Normalizer&&) noexcept = default;
Normalizer& Normalizer::operator=(Normalizer&&) noexcept = default;
Normalizer::~Normalizer() = default;

Normalizer Normalizer::from_json(const nlohmann::json& normalizer, const std::string& origin) {
  Normalizer result;
  if (normalizer.is_null()) return result;
  for (const auto& [j, where] :
       json_steps::leaves(normalizer, "normalizer", "normalizers", origin)) {
    const std::string type = type_of(*j);
    auto step = std::make_unique<Step>();
    if (type == "Replace") {
      step->kind = Step::Kind::kReplace;
      if (!j->contains("content") || !(*j)["content"].is_string()) {
        fail(origin, where + " (Replace) needs a string \"content\"");
      }
      step->content = (*j)["content"].get<std::string>();
      const auto& pattern = j->value("pattern", nlohmann::json());
      if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string() &&
          !pattern["String"].get<std::string>().empty()) {
        step->literal = pattern["String"].get<std::string>();
      } else if (pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string()) {
        step->regex = std::make_unique<Regex>(Regex::compile(pattern["Regex"].get<std::string>(),
                                                             false, origin + " (" + where + ")"));
      } else {
        fail(origin, where +
                         " (Replace) needs a pattern {\"String\": \"...\"} (non-empty) or "
                         "{\"Regex\": \"...\"}");
      }
    } else if (type == "Prepend") {
      step->kind = Step::Kind::kPrepend;
      if (!j->contains("prepend") || !(*j)["prepend"].is_string()) {
        fail(origin, where + " (Prepend) needs a string \"prepend\"");
      }
      step->content = (*j)["prepend"].get<std::string>();
    } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
      step->kind = Step::Kind::kUnicode;
      UErrorCode status = U_ZERO_ERROR;
      if (type == "NFC") step->unicode = icu::Normalizer2::getNFCInstance(status);
      if (type == "NFD") step->unicode = icu::Normalizer2::getNFDInstance(status);
      if (type == "NFKC") step->unicode = icu::Normalizer2::getNFKCInstance(status);
      if (type == "NFKD") step->unicode = icu::Normalizer2::getNFKDInstance(status);
      if (U_FAILURE(status) || step->unicode == nullptr) {
        fail(origin,
             where + " (" + type + "): ICU has no normalizer for it (" + u_errorName(status) + ")");
      }
    } else {
      fail(origin, where + " has type \"" + (type.empty() ? std::string("?") : type) +
                       "\", which is not supported (supported: Replace, Prepend, NFC, NFD, "
                       "NFKC, NFKD, and Sequence of them)");
    }
    result.steps_.push_back(std::move(step));
  }
  return result;
}

std::string Normalizer::apply(std::string_view text) const {
  std::string current(text);
  for (const auto& step : steps_) current = step->run(current);
  return current;
}

}  // namespace ps
