#include "tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

#include "tokenizer/byte_level.h"

namespace ps {

struct Regex::Impl {
  pcre2_code* code = nullptr;
  ~Impl() { pcre2_code_free(code); }
};

std::string oniguruma_to_pcre2(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '\\' || i + 1 == pattern.size()) {
      out.push_back(c);
      continue;
    }
    char next = pattern[++i];
    if (next == 's') {
      out += "\\p{White_Space}";
    } else if (next == 'S') {
      out += "\\P{White_Space}";
    } else if (next == 'Q') {
      // Quoted text is literal up to \E; copy it untouched so a quoted "\s" stays literal.
      size_t close = pattern.find("\\E", i + 1);
      size_t stop = close == std::string_view::npos ? pattern.size() : close + 2;
      out += "\\Q";
      out.append(pattern.substr(i + 1, stop - (i + 1)));
      i = stop - 1;
    } else {
      out.push_back('\\');
      out.push_back(next);
    }
  }
  return out;
}

Regex Regex::compile(const std::string& pattern, bool literal, const std::string& origin) {
  std::string source = literal ? pattern : oniguruma_to_pcre2(pattern);
  // PCRE2_LITERAL refuses UCP, which only matters for character classes anyway.
  uint32_t options = literal ? PCRE2_UTF | PCRE2_LITERAL : PCRE2_UTF | PCRE2_UCP;
  pcre2_compile_context* ctx = pcre2_compile_context_create(nullptr);
  // Oniguruma's '.' and '$' know only \n as a line end, whatever PCRE2 was built with.
  pcre2_set_newline(ctx, PCRE2_NEWLINE_LF);
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                                   options, &error_code, &error_offset, ctx);
  pcre2_compile_context_free(ctx);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    throw std::runtime_error(origin + ": regex pattern does not compile with PCRE2 at offset " +
                             std::to_string(error_offset) + ": " +
                             reinterpret_cast<const char*>(message) + " (pattern: " + pattern +
                             ")");
  }
  auto impl = std::make_unique<Impl>();
  impl->code = code;
  // JIT is a speed-up only: without it (unsupported CPU, no exec memory) the interpreter runs.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return Regex(std::move(impl));
}

Regex::Regex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;
Regex::~Regex() = default;

void Regex::find_all(std::string_view text, size_t begin, size_t end,
                     std::vector<Span>& out) const {
  struct MatchData {
    pcre2_match_data* md;
    ~MatchData() { pcre2_match_data_free(md); }
  } data{pcre2_match_data_create_from_pattern(impl_->code, nullptr)};
  if (data.md == nullptr) throw std::bad_alloc();

  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data() + begin);
  size_t length = end - begin;
  size_t offset = 0;
  while (offset < length) {
    uint32_t options = PCRE2_NO_UTF_CHECK;
    int rc = pcre2_match(impl_->code, subject, length, offset, options, data.md, nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      // The JIT's default 32 KiB stack ran out on a long run; the interpreter keeps its frames
      // on the heap and finishes the same match.
      rc = pcre2_match(impl_->code, subject, length, offset, options | PCRE2_NO_JIT, data.md,
                       nullptr);
    }
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      throw std::runtime_error(std::string("tokenizer: regex pre-tokenizer failed: ") +
                               reinterpret_cast<const char*>(message));
    }
    PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.md);
    size_t match_begin = ovector[0];
    size_t match_end = ovector[1];
    if (match_end > match_begin) {
      out.push_back({begin + match_begin, begin + match_end});
      offset = match_end;
    } else {
      // An empty match splits nothing; step over one whole character and search on.
      size_t step = utf8_sequence_length(text, begin + match_begin);
      offset = match_begin + (step == 0 ? 1 : step);
    }
  }
}

}  // namespace ps
