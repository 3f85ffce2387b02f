#pragma once
// Finding the end of an HTTP/1.x request head ("\r\n\r\n") in bytes read so far, so the edge can
// hold a connection without a thread until its whole request line and headers have arrived.
#include <cstddef>
#include <string_view>

namespace ps {

// The length of the request head (through the blank line) when `bytes` holds a complete one,
// else 0. `searched_before`: how many leading bytes an earlier call already searched, so a head
// that arrives in many small pieces is scanned once, not once per piece. Leading empty lines
// before the request line (allowed by RFC 9112 §2.2) count as part of the head.
size_t request_head_length(std::string_view bytes, size_t searched_before = 0);

}  // namespace ps
