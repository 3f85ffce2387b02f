// The response store: capacity bound (oldest out first), the time-to-live on a fake clock,
// replacing an id, erase, and capacity 0 storing nothing.
#include "responses/response_store.h"

#include <gtest/gtest.h>

namespace ps::responses {
namespace {

using Clock = std::chrono::steady_clock;

StoredResponse stored(int n) {
  return {{{"n", n}}, nlohmann::ordered_json::array({{{"role", "user"}, {"content", "x"}}})};
}

TEST(ResponseStore, KeepsAtMostCapacityOldestOutFirst) {
  ResponseStore store(2, std::chrono::seconds(60));
  EXPECT_TRUE(store.put("a", stored(1)));
  EXPECT_TRUE(store.put("b", stored(2)));
  EXPECT_TRUE(store.put("c", stored(3)));
  EXPECT_FALSE(store.get("a")) << "the oldest goes first";
  ASSERT_TRUE(store.get("b"));
  EXPECT_EQ(store.get("c")->response["n"], 3);
  EXPECT_EQ(store.get("b")->conversation[0]["role"], "user");
  EXPECT_EQ(store.size(), 2u);
}

TEST(ResponseStore, ForgetsAfterTtl) {
  Clock::time_point now{};
  ResponseStore store(8, std::chrono::seconds(10), [&] { return now; });
  store.put("a", stored(1));
  now += std::chrono::seconds(5);
  store.put("b", stored(2));
  now += std::chrono::seconds(5);  // a is 10 s old: expired; b is 5 s old
  EXPECT_FALSE(store.get("a"));
  EXPECT_TRUE(store.get("b"));
  now += std::chrono::seconds(5);
  EXPECT_FALSE(store.get("b"));
  EXPECT_EQ(store.size(), 0u);
}

TEST(ResponseStore, ReplacingAnIdRenewsItsPlaceAndTtl) {
  Clock::time_point now{};
  ResponseStore store(2, std::chrono::seconds(10), [&] { return now; });
  store.put("a", stored(1));
  store.put("b", stored(2));
  now += std::chrono::seconds(6);
  store.put("a", stored(3));  // a is now the newest, b the oldest
  store.put("c", stored(4));  // evicts b, not a
  EXPECT_FALSE(store.get("b"));
  ASSERT_TRUE(store.get("a"));
  EXPECT_EQ(store.get("a")->response["n"], 3);
  now += std::chrono::seconds(6);  // a's first put would have expired; its second has not
  EXPECT_TRUE(store.get("a"));
}

TEST(ResponseStore, EraseAndCapacityZero) {
  ResponseStore store(4, std::chrono::seconds(60));
  store.put("a", stored(1));
  EXPECT_TRUE(store.erase("a"));
  EXPECT_FALSE(store.erase("a"));
  EXPECT_FALSE(store.get("a"));
  ResponseStore off(0, std::chrono::seconds(60));
  EXPECT_FALSE(off.put("a", stored(1)));
  EXPECT_FALSE(off.get("a"));
}

}  // namespace
}  // namespace ps::responses
