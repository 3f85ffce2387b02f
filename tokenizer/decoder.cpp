#include "tokenizer/decoder.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tokenizer/byte_level.h"
#include "tokenizer/json_steps.h"

namespace ps {
namespace {

using json_steps::fail;
using json_steps::type_of;

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(text.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

// The byte a "<0xNN>" token stands for, or -1 (the reference's exact test: six characters).
int fallback_byte(std::string_view token) {
  if (token.size() != 6 || token.substr(0, 3) != "<0x" || token[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  int hi = hex(token[3]);
  int lo = hex(token[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string_view single_char(const nlohmann::json& j, const char* key, const std::string& origin,
                             const std::string& where) {
  if (!j.contains(key) || !j[key].is_string()) {
    fail(origin, where + " needs a one-character string \"" + key + "\"");
  }
  const std::string& s = j[key].get_ref<const std::string&>();
  if (s.empty() || utf8_sequence_length(s, 0) != s.size()) {
    fail(origin, where + "." + key + " must be exactly one character");
  }
  return s;
}

size_t count_field(const nlohmann::json& j, const char* key, const std::string& origin,
                   const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return 0;
  if (!j[key].is_number_unsigned()) fail(origin, where + "." + key + " must be a count >= 0");
  return j[key].get<size_t>();
}

}  // namespace

struct Decoder::Step {
  enum class Kind { kByteLevel, kReplace, kByteFallback, kFuse, kStrip, kMetaspace } kind;
  std::string from, to;  // Replace; Metaspace: from = replacement, to = " "
  size_t strip_start = 0, strip_stop = 0;
  bool metaspace_first = true;  // Metaspace: prepend_scheme is not "never"
  bool after_fuse = false;      // Strip: trims the whole text rather than each token

  // Rewrites `tokens` in place; `continuation` skips what only the text's first token or the
  // text's ends get.
  void run(std::vector<Token>& tokens, bool continuation) const {
    switch (kind) {
      case Kind::kByteLevel:
        for (Token& t : tokens) {
          if (!t.added) t.text = byte_level_decode(t.text);
        }
        break;
      case Kind::kReplace:
        for (Token& t : tokens) t.text = replace_all(t.text, from, to);
        break;
      case Kind::kByteFallback: {
        // Runs of byte tokens become one piece of raw bytes.
        std::vector<Token> out;
        out.reserve(tokens.size());
        bool in_run = false;
        for (Token& t : tokens) {
          int byte = fallback_byte(t.text);  // added tokens too, as the reference does
          if (byte < 0) {
            out.push_back(std::move(t));
            in_run = false;
            continue;
          }
          if (!in_run) out.push_back({std::string(), false});
          out.back().text.push_back(static_cast<char>(byte));
          in_run = true;
        }
        tokens = std::move(out);
        break;
      }
      case Kind::kFuse: {
        Token fused{std::string(), false};
        for (const Token& t : tokens) fused.text += t.text;
        tokens.assign(1, std::move(fused));
        break;
      }
      case Kind::kStrip:
        if (continuation && after_fuse) break;
        for (Token& t : tokens) strip(t.text);
        break;
      case Kind::kMetaspace:
        for (size_t i = 0; i < tokens.size(); ++i) {
          // The reference drops every replacement character of the first token (it is the
          // prefix the pre-tokenizer added), and turns the others into spaces.
          bool first = i == 0 && !continuation && metaspace_first;
          tokens[i].text = replace_all(tokens[i].text, from, first ? "" : " ");
        }
        break;
    }
  }

  void strip(std::string& text) const {
    size_t begin = 0;
    for (size_t n = 0; n < strip_start && text.compare(begin, from.size(), from) == 0; ++n) {
      begin += from.size();
    }
    size_t end = text.size();
    for (size_t n = 0; n < strip_stop && end >= begin + from.size() &&
                       text.compare(end - from.size(), from.size(), from) == 0;
         ++n) {
      end -= from.size();
    }
    text = text.substr(begin, end - begin);
  }
};

Decoder::Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;
Decoder::~Decoder() = default;

Decoder Decoder::from_json(const nlohmann::json& decoder, const std::string& origin) {
  if (decoder.is_null()) {
    fail(origin,
         "decoder is null; a BPE tokenizer needs one (ByteLevel, or a Sequence of Replace, "
         "ByteFallback, Fuse, Strip, Metaspace)");
  }
  Decoder result;
  bool fused = false;
  for (const auto& [j, where] : json_steps::leaves(decoder, "decoder", "decoders", origin)) {
    const std::string type = type_of(*j);
    auto step = std::make_unique<Step>();
    if (type == "ByteLevel") {
      step->kind = Step::Kind::kByteLevel;
    } else if (type == "Replace") {
      step->kind = Step::Kind::kReplace;
      const auto& pattern = j->value("pattern", nlohmann::json());
      if (!pattern.is_object() || !pattern.contains("String") || !pattern["String"].is_string() ||
          pattern["String"].get<std::string>().empty()) {
        fail(origin, where +
                         " (Replace) needs a pattern {\"String\": \"...\"} (a Regex pattern "
                         "is not supported in decoders)");
      }
      if (!j->contains("content") || !(*j)["content"].is_string()) {
        fail(origin, where + " (Replace) needs a string \"content\"");
      }
      step->from = pattern["String"].get<std::string>();
      step->to = (*j)["content"].get<std::string>();
    } else if (type == "ByteFallback") {
      step->kind = Step::Kind::kByteFallback;
    } else if (type == "Fuse") {
      step->kind = Step::Kind::kFuse;
      fused = true;
    } else if (type == "Strip") {
      step->kind = Step::Kind::kStrip;
      step->from = std::string(single_char(*j, "content", origin, where));
      step->strip_start = count_field(*j, "start", origin, where);
      step->strip_stop = count_field(*j, "stop", origin, where);
      step->after_fuse = fused;
      if (fused && (step->strip_start > 0 || step->strip_stop > 0)) result.position_free_ = false;
    } else if (type == "Metaspace") {
      step->kind = Step::Kind::kMetaspace;
      step->from = j->contains("replacement") ? std::string(single_char(*j, "replacement", origin,
                                                                        where))
                                              : std::string("\xE2\x96\x81");  // ▁
      std::string scheme = j->value("prepend_scheme", std::string("always"));
      if (j->contains("add_prefix_space") && (*j)["add_prefix_space"].is_boolean() &&
          !(*j)["add_prefix_space"].get<bool>()) {
        scheme = "never";
      }
      step->metaspace_first = scheme != "never";
      if (step->metaspace_first) result.position_free_ = false;
    } else {
      fail(origin, where + " has type \"" + (type.empty() ? std::string("?") : type) +
                       "\", which is not supported (supported: ByteLevel, Replace, ByteFallback, "
                       "Fuse, Strip, Metaspace, and Sequence of them)");
    }
    result.steps_.push_back(std::move(step));
  }
  return result;
}

std::string Decoder::decode(std::vector<Token> tokens) const {
  for (const auto& step : steps_) step->run(tokens, false);
  std::string out;
  for (const Token& t : tokens) out += t.text;
  return out;
}

std::string Decoder::continuation_bytes(const Token& token) const {
  std::vector<Token> tokens{token};
  for (const auto& step : steps_) step->run(tokens, true);
  std::string out;
  for (const Token& t : tokens) out += t.text;
  return out;
}

}  // namespace ps
