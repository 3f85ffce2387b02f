#include "tokenizer/pre_tokenizer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tokenizer/json_steps.h"

#include "tokenizer/byte_level.h"

namespace ps {
namespace {

// The Rust library's built-in ByteLevel pattern (GPT-2), used when ByteLevel has use_regex true.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

using json_steps::fail;
using json_steps::type_of;

bool bool_field(const nlohmann::json& j, const char* key, bool fallback, const std::string& origin,
                const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean()) fail(origin, where + "." + key + " must be true or false");
  return j[key].get<bool>();
}

}  // namespace

PreTokenizer PreTokenizer::from_json(const nlohmann::json& pre_tokenizer,
                                     const std::string& origin) {
  PreTokenizer result;
  if (pre_tokenizer.is_null()) return result;  // SentencePiece style: the whole text is one word
  const auto leaves = json_steps::leaves(pre_tokenizer, "pre_tokenizer", "pretokenizers", origin);

  for (size_t i = 0; i < leaves.size(); ++i) {
    const nlohmann::json& leaf = *leaves[i].first;
    const std::string& where = leaves[i].second;
    std::string type = type_of(leaf);
    if (result.byte_level_) {
      fail(origin, where + " (" + type +
                       ") follows the ByteLevel step; only Split steps before a final ByteLevel "
                       "are supported");
    }
    if (type == "ByteLevel") {
      result.byte_level_ = true;
      result.add_prefix_space_ = bool_field(leaf, "add_prefix_space", true, origin, where);
      if (result.add_prefix_space_ && i != 0) {
        fail(origin, where +
                         ".add_prefix_space is true after a Split step; that combination is not "
                         "supported (set it to false)");
      }
      if (result.metaspace_) {
        fail(origin, where + " (ByteLevel) cannot follow a Metaspace step");
      }
      if (bool_field(leaf, "use_regex", true, origin, where)) {
        result.steps_.push_back(
            {Regex::compile(kGpt2Pattern, false, origin), Behavior::kIsolated, false});
      }
    } else if (type == "Metaspace") {
      if (i != 0) {
        fail(origin, where +
                         " (Metaspace) is supported only as the first pre-tokenizer step (it "
                         "rewrites the text the others split)");
      }
      result.metaspace_ = true;
      std::string replacement = "\xE2\x96\x81";  // ▁
      if (leaf.contains("replacement")) {
        if (!leaf["replacement"].is_string() || leaf["replacement"].get<std::string>().empty() ||
            utf8_sequence_length(leaf["replacement"].get<std::string>(), 0) !=
                leaf["replacement"].get<std::string>().size()) {
          fail(origin, where + ".replacement must be one character");
        }
        replacement = leaf["replacement"].get<std::string>();
      }
      result.metaspace_replacement_ = replacement;
      std::string scheme = "always";
      if (leaf.contains("prepend_scheme") && !leaf["prepend_scheme"].is_null()) {
        if (!leaf["prepend_scheme"].is_string()) {
          fail(origin, where + ".prepend_scheme must be \"first\", \"always\" or \"never\"");
        }
        scheme = leaf["prepend_scheme"].get<std::string>();
      }
      // Old files say add_prefix_space instead; false means never.
      if (!bool_field(leaf, "add_prefix_space", true, origin, where)) {
        if (leaf.contains("prepend_scheme") && scheme != "never") {
          fail(origin,
               where + ": add_prefix_space false contradicts prepend_scheme \"" + scheme + "\"");
        }
        scheme = "never";
      }
      if (scheme == "always") {
        result.metaspace_prepend_ = Prepend::kAlways;
      } else if (scheme == "first") {
        result.metaspace_prepend_ = Prepend::kFirst;
      } else if (scheme == "never") {
        result.metaspace_prepend_ = Prepend::kNever;
      } else {
        fail(origin, where + ".prepend_scheme \"" + scheme +
                         "\" is unknown (expected first, always or never)");
      }
      // split (default true) cuts before every replacement character, which stays with the
      // word after it.
      if (bool_field(leaf, "split", true, origin, where)) {
        result.steps_.push_back({Regex::compile(replacement, true, origin + " (" + where + ")"),
                                 Behavior::kMergedWithNext, false});
      }
    } else if (type == "Split") {
      const auto& pattern = leaf.value("pattern", nlohmann::json());
      bool literal = false;
      std::string source;
      if (pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string()) {
        source = pattern["Regex"].get<std::string>();
      } else if (pattern.is_object() && pattern.contains("String") &&
                 pattern["String"].is_string()) {
        source = pattern["String"].get<std::string>();
        literal = true;
      } else {
        fail(origin, where + ".pattern must be {\"Regex\": \"...\"} or {\"String\": \"...\"}");
      }
      std::string behavior = leaf.value("behavior", std::string("Isolated"));
      Behavior b;
      if (behavior == "Isolated") {
        b = Behavior::kIsolated;
      } else if (behavior == "Removed") {
        b = Behavior::kRemoved;
      } else if (behavior == "MergedWithPrevious") {
        b = Behavior::kMergedWithPrevious;
      } else if (behavior == "MergedWithNext") {
        b = Behavior::kMergedWithNext;
      } else if (behavior == "Contiguous") {
        b = Behavior::kContiguous;
      } else {
        fail(origin, where + ".behavior \"" + behavior +
                         "\" is unknown (expected Isolated, Removed, MergedWithPrevious, "
                         "MergedWithNext or Contiguous)");
      }
      bool invert = bool_field(leaf, "invert", false, origin, where);
      result.steps_.push_back(
          {Regex::compile(source, literal, origin + " (" + where + ")"), b, invert});
    } else {
      fail(origin, where + " has type \"" + type +
                       "\", which is not supported (supported: Split, ByteLevel last, Metaspace "
                       "first, and Sequence of them)");
    }
  }
  return result;
}

std::string PreTokenizer::prepare(std::string_view text, bool starts_input) const {
  if (add_prefix_space_ && !text.empty() && text.front() != ' ') {
    std::string out = " ";
    out.append(text);
    return out;
  }
  if (!metaspace_) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    if (c == ' ') {
      out += metaspace_replacement_;
    } else {
      out.push_back(c);
    }
  }
  bool prepend = metaspace_prepend_ == Prepend::kAlways ||
                 (metaspace_prepend_ == Prepend::kFirst && starts_input);
  if (prepend && out.compare(0, metaspace_replacement_.size(), metaspace_replacement_) != 0) {
    out.insert(0, metaspace_replacement_);
  }
  return out;
}

void PreTokenizer::split(std::string_view text, std::vector<Regex::Span>& pieces) const {
  size_t run_begin = 0;
  size_t pos = 0;
  auto flush_run = [&](size_t run_end) {
    if (run_end == run_begin) return;
    std::vector<Regex::Span> current{{run_begin, run_end}};
    for (const Step& step : steps_) {
      std::vector<Regex::Span> next;
      next.reserve(current.size() * 2);
      for (const Regex::Span& piece : current) apply(step, text, piece, next);
      current = std::move(next);
    }
    pieces.insert(pieces.end(), current.begin(), current.end());
  };
  while (pos < text.size()) {
    size_t len = utf8_sequence_length(text, pos);
    if (len == 0) {
      flush_run(pos);
      pieces.push_back({pos, pos + 1});
      run_begin = ++pos;
    } else {
      pos += len;
    }
  }
  flush_run(text.size());
}

// Appends the parts of `whole` that `step` makes, in order.
void PreTokenizer::apply(const Step& step, std::string_view text, Regex::Span whole,
                         std::vector<Regex::Span>& pieces) const {
  std::vector<Regex::Span> matches;
  step.regex.find_all(text, whole.begin, whole.end, matches);

  // Every byte of the piece, as (span, is_delimiter) in order; invert swaps the roles.
  struct Part {
    Regex::Span span;
    bool delim;
  };
  std::vector<Part> parts;
  parts.reserve(matches.size() * 2 + 1);
  size_t prev = whole.begin;
  for (const Regex::Span& m : matches) {
    if (m.begin > prev) parts.push_back({{prev, m.begin}, step.invert});
    parts.push_back({m, !step.invert});
    prev = m.end;
  }
  if (prev < whole.end) parts.push_back({{prev, whole.end}, step.invert});

  std::vector<Regex::Span> out;
  switch (step.behavior) {
    case Behavior::kIsolated:
      for (const Part& p : parts) out.push_back(p.span);
      break;
    case Behavior::kRemoved:
      for (const Part& p : parts) {
        if (!p.delim) out.push_back(p.span);
      }
      break;
    case Behavior::kMergedWithPrevious: {
      bool previous_delim = false;
      for (const Part& p : parts) {
        if (p.delim && !previous_delim && !out.empty()) {
          out.back().end = p.span.end;
        } else {
          out.push_back(p.span);
        }
        previous_delim = p.delim;
      }
      break;
    }
    case Behavior::kMergedWithNext: {
      bool previous_delim = false;  // "previous" in the backwards walk: the part to the right
      for (size_t i = parts.size(); i-- > 0;) {
        const Part& p = parts[i];
        if (p.delim && !previous_delim && !out.empty()) {
          out.back().begin = p.span.begin;
        } else {
          out.push_back(p.span);
        }
        previous_delim = p.delim;
      }
      std::reverse(out.begin(), out.end());
      break;
    }
    case Behavior::kContiguous: {
      bool previous_delim = false;
      for (size_t i = 0; i < parts.size(); ++i) {
        const Part& p = parts[i];
        if (i > 0 && p.delim && previous_delim) {
          out.back().end = p.span.end;
        } else {
          out.push_back(p.span);
        }
        previous_delim = p.delim;
      }
      break;
    }
  }
  pieces.insert(pieces.end(), out.begin(), out.end());
}

}  // namespace ps
