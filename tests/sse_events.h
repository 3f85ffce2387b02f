#pragma once
// The events of a named-event SSE text ("event: NAME\ndata: JSON\n\n" each), as the Messages
// and Responses streams write them, checking the framing on the way and that each event's name
// is its data's "type".
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ps::testing {

inline std::vector<std::pair<std::string, nlohmann::json>> named_events(const std::string& sse) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  std::istringstream in(sse);
  std::string event, data, blank;
  while (std::getline(in, event)) {
    EXPECT_EQ(event.rfind("event: ", 0), 0u) << event;
    EXPECT_TRUE(std::getline(in, data));
    EXPECT_EQ(data.rfind("data: ", 0), 0u) << data;
    EXPECT_TRUE(std::getline(in, blank));
    EXPECT_EQ(blank, "");
    nlohmann::json j = nlohmann::json::parse(data.substr(6));
    EXPECT_EQ(j["type"], event.substr(7)) << "an event's name is its data's type";
    out.emplace_back(event.substr(7), std::move(j));
  }
  return out;
}

}  // namespace ps::testing
