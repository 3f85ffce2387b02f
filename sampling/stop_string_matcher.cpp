#include "sampling/stop_string_matcher.h"

#include <algorithm>

namespace ps {
namespace {

std::vector<size_t> borders(const std::string& s) {
  std::vector<size_t> b(s.size() + 1, 0);
  size_t k = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    while (k > 0 && s[i] != s[k]) k = b[k];
    if (s[i] == s[k]) ++k;
    b[i + 1] = k;
  }
  return b;
}

}  // namespace

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) {
  for (auto& s : stops) {
    if (s.empty()) continue;  // validate() rejects these; an empty stop would match everywhere
    Stop st;
    st.border = borders(s);
    st.text = std::move(s);
    stops_.push_back(std::move(st));
  }
}

std::optional<StopStringMatcher::Match> StopStringMatcher::feed(std::string_view piece,
                                                                bool report) {
  for (size_t j = 0; j < piece.size(); ++j) {
    const char c = piece[j];
    std::optional<Match> found;
    for (size_t i = 0; i < stops_.size(); ++i) {
      Stop& st = stops_[i];
      while (st.state > 0 && st.text[st.state] != c) st.state = st.border[st.state];
      if (st.text[st.state] == c) ++st.state;
      if (st.state == st.text.size()) {
        if (report && (!found || st.text.size() > stops_[found->stop_index].text.size())) {
          found = Match{j + 1, i};
        }
        st.state = st.border[st.state];  // keep the automaton a proper prefix
      }
    }
    if (found) return found;
  }
  return std::nullopt;
}

size_t StopStringMatcher::partial_length() const {
  size_t n = 0;
  for (const Stop& st : stops_) n = std::max(n, st.state);
  return n;
}

}  // namespace ps
