#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ps {

// Finds stop strings in text that arrives in pieces, with one KMP automaton per stop string.
// It knows, after every piece, the longest tail of the text that could still grow into a stop
// string: that tail is what a streaming response must hold back. Work is O(bytes fed x number
// of stop strings), whatever the stop strings' length.
class StopStringMatcher {
 public:
  explicit StopStringMatcher(std::vector<std::string> stops);

  struct Match {
    size_t end;         // offset in the fed piece just past the match
    size_t stop_index;  // which stop string
  };

  // Feeds the next piece of text. With `report` set, returns the first stop string that
  // completes in this piece (the earliest end, so the answer does not depend on how the text
  // was split; on a tie the longest, which starts first) and stops reading there. Without it,
  // completed stop strings are passed over (min_tokens not yet reached).
  std::optional<Match> feed(std::string_view piece, bool report);

  // Length of the longest suffix of the text so far that is a proper prefix of a stop string.
  size_t partial_length() const;

  bool empty() const { return stops_.empty(); }
  const std::string& stop(size_t i) const { return stops_[i].text; }

 private:
  struct Stop {
    std::string text;
    std::vector<size_t> border;  // border[k]: longest proper border of text[0, k)
    size_t state = 0;            // bytes of text matched by the current suffix
  };

  std::vector<Stop> stops_;
};

}  // namespace ps
