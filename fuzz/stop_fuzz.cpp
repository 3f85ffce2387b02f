// libFuzzer target: stop strings and SSE framing. The input is stop strings and a text, split
// into pieces at fuzzer-chosen points. Invariants: the matcher finds the same first stop
// wherever the text is split; the held-back tail is a prefix of some stop string; and any text
// (invalid UTF-8 included) framed as an SSE event is one "data: ...\n\n" line of valid JSON.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/sse.h"
#include "sampling/stop_string_matcher.h"

namespace {

// Layout: byte 0 = number of stop strings (mod 5); then each stop as len byte + bytes; then
// the text; the cut points come from the text's own bytes so every input is meaningful.
struct Input {
  std::vector<std::string> stops;
  std::string text;
};

Input split(const uint8_t* data, size_t size) {
  Input in;
  size_t pos = 1;
  int n = size ? data[0] % 5 : 0;
  for (int i = 0; i < n && pos < size; ++i) {
    size_t len = 1 + data[pos++] % 8;
    if (pos + len > size) break;
    in.stops.emplace_back(reinterpret_cast<const char*>(data + pos), len);
    pos += len;
  }
  if (pos < size) in.text.assign(reinterpret_cast<const char*>(data + pos), size - pos);
  return in;
}

// First match as an absolute end offset in the text, or npos.
size_t first_stop(const std::vector<std::string>& stops, const std::string& text, size_t step,
                  size_t* which) {
  ps::StopStringMatcher m(stops);
  size_t fed = 0;
  while (fed < text.size()) {
    size_t len = std::min(step, text.size() - fed);
    std::optional<ps::StopStringMatcher::Match> hit =
        m.feed(std::string_view(text).substr(fed, len), true);
    if (hit) {
      *which = hit->stop_index;
      return fed + hit->end;
    }
    fed += len;
    size_t partial = m.partial_length();
    bool is_prefix = partial == 0;
    for (const auto& s : stops) {
      if (partial < s.size() && text.compare(fed - partial, partial, s, 0, partial) == 0)
        is_prefix = true;
    }
    if (!is_prefix) __builtin_trap();  // held back text that cannot grow into a stop
    step = step * 3 % 7 + 1;           // uneven pieces
  }
  return std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in = split(data, size);
  size_t which_whole = 0, which_pieces = 0;
  size_t whole = first_stop(in.stops, in.text, in.text.size() + 1, &which_whole);
  size_t pieces = first_stop(in.stops, in.text, 1 + size % 5, &which_pieces);
  if (whole != pieces) __builtin_trap();  // the answer depends on how the text was split
  if (whole != std::string::npos) {
    if (which_whole != which_pieces) __builtin_trap();
    const std::string& s = in.stops[which_whole];
    if (whole < s.size() || in.text.compare(whole - s.size(), s.size(), s) != 0) __builtin_trap();
  }

  std::string event = ps::sse_event(nlohmann::json{{"text", in.text}});
  if (event.rfind("data: ", 0) != 0 || event.size() < 8 ||
      event.compare(event.size() - 2, 2, "\n\n") != 0)
    __builtin_trap();
  std::string payload = event.substr(6, event.size() - 8);
  if (payload.find('\n') != std::string::npos) __builtin_trap();  // would split the event
  auto j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j["text"].is_string()) __builtin_trap();
  return 0;
}
