// Where a request head ends: the edge hands a connection to a worker only at that point.
#include "http/request_head.h"

#include <gtest/gtest.h>

#include <string>

namespace ps {
namespace {

TEST(RequestHead, CompleteHeadEndsAfterTheBlankLine) {
  const std::string head = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_EQ(request_head_length(head), head.size());
  // Body bytes (or a pipelined request) after the head are not part of it.
  EXPECT_EQ(request_head_length(head + "{\"prompt\":1}"), head.size());
  EXPECT_EQ(request_head_length(head + head), head.size());
}

TEST(RequestHead, IncompleteHeadIsZero) {
  EXPECT_EQ(request_head_length(""), 0u);
  EXPECT_EQ(request_head_length("POST /v1/completions HTT"), 0u);
  EXPECT_EQ(request_head_length("GET / HTTP/1.1\r\nHost: x\r\n"), 0u);
  EXPECT_EQ(request_head_length("GET / HTTP/1.1\r\nHost: x\r\n\r"), 0u);
}

TEST(RequestHead, BareLineFeedsCount) {
  const std::string head = "GET / HTTP/1.1\nHost: x\n\n";
  EXPECT_EQ(request_head_length(head), head.size());
}

TEST(RequestHead, IncrementalSearchFindsATerminatorSplitAcrossReads) {
  const std::string head = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  // Feed byte by byte, telling each call how much the previous one searched.
  for (size_t split = 1; split < head.size(); ++split) {
    std::string so_far = head.substr(0, split);
    size_t searched = so_far.size();
    ASSERT_EQ(request_head_length(so_far), 0u) << split;
    so_far += head.substr(split);
    EXPECT_EQ(request_head_length(so_far, searched), head.size()) << split;
  }
}

}  // namespace
}  // namespace ps
