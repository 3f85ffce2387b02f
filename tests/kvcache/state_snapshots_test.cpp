// StateSnapshotStore (kvcache/state_snapshots.h): every transition, LRU eviction, a newer state
// of the same prefix replacing the old one, and integrity after each step.
#include <gtest/gtest.h>

#include <stdexcept>

#include "kvcache/state_snapshots.h"

namespace ps {
namespace {

TEST(StateSnapshotStore, ReserveCommitFindAbandon) {
  StateSnapshotStore s(3, 4);
  EXPECT_TRUE(s.enabled());
  EXPECT_EQ(s.interval_blocks(), 4);
  const int32_t a = s.reserve();  // free -> pending
  const int32_t b = s.reserve();
  EXPECT_NE(a, b);
  EXPECT_EQ(s.num_pending(), 2);
  EXPECT_EQ(s.find(11), -1);  // pending is not findable
  s.commit(a, 11);            // pending -> held
  s.abandon(b);               // pending -> free
  s.check_integrity();
  EXPECT_EQ(s.num_held(), 1);
  EXPECT_EQ(s.num_pending(), 0);
  EXPECT_EQ(s.find(11), a);
  EXPECT_EQ(s.find(12), -1);
  EXPECT_THROW(s.commit(a, 13), std::logic_error);  // held, not pending
  EXPECT_THROW(s.abandon(b), std::logic_error);     // free, not pending
  EXPECT_THROW(s.commit(7, 13), std::logic_error);  // out of range
}

TEST(StateSnapshotStore, EvictsTheLeastRecentlyUsedHeldOne) {
  StateSnapshotStore s(2, 1);
  const int32_t a = s.reserve();
  s.commit(a, 1);
  const int32_t b = s.reserve();
  s.commit(b, 2);
  EXPECT_EQ(s.find(1), a);  // 1 is now the most recently used: 2 goes first
  const int32_t c = s.reserve();
  EXPECT_EQ(c, b);
  EXPECT_EQ(s.find(2), -1);  // evicted with its reservation
  EXPECT_EQ(s.find(1), a);
  s.commit(c, 3);
  s.check_integrity();
  EXPECT_EQ(s.num_held(), 2);
}

TEST(StateSnapshotStore, NothingToReserveWhileAllArePending) {
  StateSnapshotStore s(2, 1);
  const int32_t a = s.reserve(), b = s.reserve();
  EXPECT_EQ(s.reserve(), -1);
  s.abandon(a);
  EXPECT_EQ(s.reserve(), a);
  s.abandon(a);
  s.abandon(b);
  s.check_integrity();
  EXPECT_EQ(s.num_held() + s.num_pending(), 0);
}

TEST(StateSnapshotStore, ANewerStateOfTheSamePrefixReplacesTheOld) {
  StateSnapshotStore s(3, 1);
  const int32_t a = s.reserve();
  s.commit(a, 5);
  const int32_t b = s.reserve();
  s.commit(b, 5);  // two sequences snapshotted the same prefix in one step
  s.check_integrity();
  EXPECT_EQ(s.num_held(), 1);
  EXPECT_EQ(s.find(5), b);
  // The old one is free again: two more fit without evicting b.
  const int32_t c = s.reserve(), d = s.reserve();
  EXPECT_NE(c, b);
  EXPECT_NE(d, b);
  EXPECT_EQ(s.find(5), b);
}

TEST(StateSnapshotStore, OffWithNoSnapshotsOrNoInterval) {
  EXPECT_FALSE(StateSnapshotStore(0, 4).enabled());
  EXPECT_FALSE(StateSnapshotStore(4, 0).enabled());
  EXPECT_EQ(StateSnapshotStore(0, 4).reserve(), -1);
  EXPECT_THROW(StateSnapshotStore(-1, 4), std::invalid_argument);
}

}  // namespace
}  // namespace ps
