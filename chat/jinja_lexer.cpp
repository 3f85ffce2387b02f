#include "chat/jinja_lexer.h"

#include <algorithm>
#include <cctype>

#include "chat/jinja_text.h"

namespace ps::jinja {

TemplateError::TemplateError(int line, int column, const std::string& message)
    : std::runtime_error("line " + std::to_string(line) + ", column " + std::to_string(column) +
                         ": " + message),
      line_(line),
      column_(column),
      message_(message) {}

namespace {

bool is_python_whitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Jinja2 reads `\r\n` and `\r` as `\n` everywhere, and drops one trailing newline.
std::string normalize(const std::string& source, bool keep_trailing_newline) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!keep_trailing_newline && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string rstrip_ws(const std::string& s) {
  size_t e = s.size();
  while (e > 0 && is_python_whitespace(s[e - 1])) --e;
  return s.substr(0, e);
}

class Lexer {
 public:
  Lexer(const std::string& source, const LexOptions& options)
      : src_(normalize(source, options.keep_trailing_newline)), opt_(options) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    size_t pos = 0;
    bool line_starting = true;
    while (pos < src_.size()) {
      size_t at = find_opener(pos);
      if (at == std::string::npos) {
        emit_data(src_.substr(pos), pos);
        break;
      }
      std::string text = src_.substr(pos, at - pos);
      char kind = src_[at + 1];
      char sign =
          at + 2 < src_.size() && (src_[at + 2] == '-' || src_[at + 2] == '+') ? src_[at + 2] : 0;
      if (sign == '-') {
        text = rstrip_ws(text);
      } else if (sign != '+' && opt_.lstrip_blocks && kind != '{') {
        size_t l_pos = text.rfind('\n');
        l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
        if ((l_pos > 0 || line_starting) &&
            std::all_of(text.begin() + l_pos, text.end(),
                        [](char c) { return c == ' ' || c == '\t'; }))
          text.resize(l_pos);
      }
      emit_data(text, pos);
      size_t p = at + 2 + (sign ? 1 : 0);
      if (kind == '#') {
        pos = skip_comment(at, p);
      } else if (kind == '%' && is_raw_begin(p)) {
        pos = read_raw(at, p);
      } else {
        pos = read_tag(at, p, kind == '{');
      }
      line_starting = pos > 0 && src_[pos - 1] == '\n';
    }
    tokens_.push_back({TokenType::kEnd, "", line_of(src_.size()), column_of(src_.size())});
    return std::move(tokens_);
  }

 private:
  int line_of(size_t offset) const {
    return static_cast<int>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) -
                            line_starts_.begin());
  }
  int column_of(size_t offset) const {
    return static_cast<int>(offset - line_starts_[line_of(offset) - 1]) + 1;
  }
  [[noreturn]] void fail(size_t offset, const std::string& message) const {
    throw TemplateError(line_of(offset), column_of(offset), message);
  }
  void push(TokenType type, std::string text, size_t offset) {
    tokens_.push_back({type, std::move(text), line_of(offset), column_of(offset)});
  }
  void emit_data(const std::string& text, size_t offset) {
    if (!text.empty()) push(TokenType::kData, text, offset);
  }

  size_t find_opener(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1))
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#'))
        return i;
    return std::string::npos;
  }

  // After a closing tag: `-` eats all following whitespace, `+` nothing, and trim_blocks one
  // newline (block and comment tags only).
  size_t after_close(size_t end, char sign, bool block_like) const {
    if (sign == '-') {
      while (end < src_.size() && is_python_whitespace(src_[end])) ++end;
    } else if (sign != '+' && block_like && opt_.trim_blocks && end < src_.size() &&
               src_[end] == '\n') {
      ++end;
    }
    return end;
  }

  size_t skip_comment(size_t at, size_t p) const {
    size_t close = src_.find("#}", p);
    if (close == std::string::npos) fail(at, "Missing end of comment tag");
    char sign =
        close > p && (src_[close - 1] == '-' || src_[close - 1] == '+') ? src_[close - 1] : 0;
    return after_close(close + 2, sign, true);
  }

  static bool word_at(const std::string& s, size_t& p, const char* word) {
    size_t q = p;
    while (q < s.size() && is_python_whitespace(s[q])) ++q;
    size_t n = std::char_traits<char>::length(word);
    if (s.compare(q, n, word) != 0) return false;
    q += n;
    if (q < s.size() && (std::isalnum(static_cast<unsigned char>(s[q])) || s[q] == '_'))
      return false;
    while (q < s.size() && is_python_whitespace(s[q])) ++q;
    p = q;
    return true;
  }

  bool is_raw_begin(size_t p) const {
    size_t q = p;
    if (!word_at(src_, q, "raw")) return false;
    return src_.compare(q, 2, "%}") == 0 || src_.compare(q, 3, "-%}") == 0;
  }

  size_t read_raw(size_t at, size_t p) {
    word_at(src_, p, "raw");
    if (src_[p] == '-') {
      p = after_close(p + 3, '-', false);
    } else {
      p += 2;  // Jinja2 applies no trim_blocks after {% raw %}
    }
    for (size_t i = src_.find("{%", p); i != std::string::npos; i = src_.find("{%", i + 1)) {
      size_t q = i + 2;
      char sign = q < src_.size() && (src_[q] == '-' || src_[q] == '+') ? src_[q] : 0;
      if (sign) ++q;
      if (!word_at(src_, q, "endraw")) continue;
      char close_sign = src_[q] == '-' || src_[q] == '+' ? src_[q] : 0;
      if (src_.compare(q + (close_sign ? 1 : 0), 2, "%}") != 0) continue;
      std::string text = src_.substr(p, i - p);
      if (sign == '-') {
        text = rstrip_ws(text);
      } else if (sign != '+' && opt_.lstrip_blocks) {
        size_t l = text.rfind('\n');
        l = l == std::string::npos ? 0 : l + 1;
        if (std::all_of(text.begin() + l, text.end(), [](char c) { return c == ' ' || c == '\t'; }))
          text.resize(l);
      }
      emit_data(text, p);
      return after_close(q + (close_sign ? 1 : 0) + 2, close_sign, true);
    }
    fail(at, "Missing end of raw directive");
  }

  size_t read_tag(size_t at, size_t p, bool variable) {
    push(variable ? TokenType::kVariableBegin : TokenType::kBlockBegin, "", at);
    std::vector<char> balance;
    while (true) {
      while (p < src_.size() && is_python_whitespace(src_[p])) ++p;
      if (p >= src_.size())
        fail(at, variable ? "unexpected end of template, expected '}}'"
                          : "unexpected end of template, expected '%}'");
      if (balance.empty()) {
        const char* close = variable ? "}}" : "%}";
        char sign = src_[p] == '-' || (src_[p] == '+' && !variable) ? src_[p] : 0;
        if (src_.compare(p + (sign ? 1 : 0), 2, close) == 0) {
          push(variable ? TokenType::kVariableEnd : TokenType::kBlockEnd, "", p);
          return after_close(p + (sign ? 1 : 0) + 2, sign, !variable);
        }
      }
      p = read_token(p, balance);
    }
  }

  size_t read_token(size_t p, std::vector<char>& balance) {
    char c = src_[p];
    auto digit = [&](size_t i) {
      return i < src_.size() && std::isdigit(static_cast<unsigned char>(src_[i]));
    };
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t q = p;
      std::string digits;
      auto run = [&] {
        while (digit(q) || (src_[q] == '_' && digit(q + 1))) {
          if (src_[q] != '_') digits += src_[q];
          ++q;
        }
      };
      run();
      bool is_float = false;
      bool after_dot = !tokens_.empty() && tokens_.back().type == TokenType::kOperator &&
                       tokens_.back().text == ".";
      if (!after_dot && q < src_.size() && src_[q] == '.' && digit(q + 1)) {
        digits += '.';
        ++q;
        run();
        is_float = true;
      }
      if (!after_dot && q < src_.size() && (src_[q] == 'e' || src_[q] == 'E')) {
        size_t r = q + 1;
        if (r < src_.size() && (src_[r] == '+' || src_[r] == '-')) ++r;
        if (digit(r)) {
          digits += src_.substr(q, r - q);
          q = r;
          run();
          is_float = true;
        }
      }
      push(is_float ? TokenType::kFloat : TokenType::kInteger, digits, p);
      return q;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t q = p;
      while (q < src_.size() &&
             (std::isalnum(static_cast<unsigned char>(src_[q])) || src_[q] == '_'))
        ++q;
      push(TokenType::kName, src_.substr(p, q - p), p);
      return q;
    }
    if (c == '\'' || c == '"') return read_string(p);
    static const char* two[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const char* op : two) {
      if (src_.compare(p, 2, op) == 0) {
        push(TokenType::kOperator, op, p);
        return p + 2;
      }
    }
    if (std::string("+-/*%~[](){}<>=.:|,;").find(c) == std::string::npos)
      fail(p, std::string("unexpected char '") + c + "'");
    if (c == '(' || c == '[' || c == '{') balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    if (c == ')' || c == ']' || c == '}') {
      if (balance.empty() || balance.back() != c) fail(p, std::string("unexpected '") + c + "'");
      balance.pop_back();
    }
    push(TokenType::kOperator, std::string(1, c), p);
    return p + 1;
  }

  // Python string-literal escapes, as Jinja2 decodes them ("unicode-escape").
  size_t read_string(size_t p) {
    char q = src_[p];
    std::string out;
    size_t i = p + 1;
    while (true) {
      if (i >= src_.size()) fail(p, "unexpected end of string");
      char c = src_[i];
      if (c == q) break;
      if (c != '\\') {
        out += c;
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) fail(p, "unexpected end of string");
      char e = src_[i + 1];
      i += 2;
      auto hex = [&](int n) {
        uint32_t v = 0;
        for (int k = 0; k < n; ++k, ++i) {
          if (i >= src_.size() || !std::isxdigit(static_cast<unsigned char>(src_[i])))
            fail(p, "truncated \\x/\\u escape in string");
          v = v * 16 + static_cast<uint32_t>(std::stoi(std::string(1, src_[i]), nullptr, 16));
        }
        return v;
      };
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case '\\':
          out += '\\';
          break;
        case '\'':
          out += '\'';
          break;
        case '"':
          out += '"';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case '\n':
          break;  // a backslash-newline continues the line
        case 'x':
          text::append_utf8(out, hex(2));
          break;
        case 'u':
          text::append_utf8(out, hex(4));
          break;
        case 'U':
          text::append_utf8(out, hex(8));
          break;
        default:
          if (e >= '0' && e <= '7') {
            uint32_t v = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && i < src_.size() && src_[i] >= '0' && src_[i] <= '7'; ++k, ++i)
              v = v * 8 + static_cast<uint32_t>(src_[i] - '0');
            text::append_utf8(out, v);
          } else {
            out += '\\';  // Python keeps unknown escapes as written
            out += e;
          }
      }
    }
    push(TokenType::kString, out, p);
    return i + 1;
  }

  std::string src_;
  LexOptions opt_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(const std::string& source, const LexOptions& options) {
  return Lexer(source, options).run();
}

}  // namespace ps::jinja
