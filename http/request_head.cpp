#include "http/request_head.h"

namespace ps {

size_t request_head_length(std::string_view bytes, size_t searched_before) {
  // Step back 3 bytes: the terminator may straddle the previous search's end.
  size_t from = searched_before > 3 ? searched_before - 3 : 0;
  // A bare-LF head ("\n\n") is accepted by httplib too; look for the earliest of either form.
  for (size_t i = from; i < bytes.size(); ++i) {
    if (bytes[i] != '\n') continue;
    if (i >= 1 && bytes[i - 1] == '\n') return i + 1;
    if (i >= 2 && bytes[i - 1] == '\r' && bytes[i - 2] == '\n') return i + 1;
  }
  return 0;
}

}  // namespace ps
