#pragma once
// A compiled PCRE2 pattern (UTF + UCP, JIT when the platform has it) that finds every match in
// a piece of text. The Split patterns in tokenizer.json are written for Oniguruma (what the Rust
// `tokenizers` library uses); compile() translates the few escapes whose meaning differs.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ps {

class Regex {
 public:
  struct Span {
    size_t begin;
    size_t end;
  };

  // `literal` compiles `pattern` as plain text (a Split {"String": ...} pattern). Throws
  // std::runtime_error naming `origin` and PCRE2's message if the pattern does not compile.
  static Regex compile(const std::string& pattern, bool literal, const std::string& origin);

  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  ~Regex();

  // Appends the non-empty matches in text[begin, end) (offsets into `text`). `text` must be
  // well-formed UTF-8: the caller checks, so PCRE2 can skip its own check. Lookarounds see
  // only text[begin, end), like a Split that runs on that piece alone.
  void find_all(std::string_view text, size_t begin, size_t end, std::vector<Span>& out) const;

 private:
  struct Impl;
  explicit Regex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Rewrites Oniguruma escapes to PCRE2 ones with the same meaning: \s and \S are White_Space in
// Oniguruma, while PCRE2's UCP \s also takes U+180E. Everything else passes through unchanged.
std::string oniguruma_to_pcre2(std::string_view pattern);

}  // namespace ps
