// Hub model ids resolve to snapshot folders of a real Hugging Face cache tree made on disk (with
// the cache's own layout: refs/<branch> holding a commit, snapshots/<commit>/ files that are
// symlinks into blobs/), and a model that is not there is an error listing every place looked.
#include "checkpoint/hub_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace ps {
namespace {
namespace fs = std::filesystem;

const std::string kMain = "0123456789abcdef0123456789abcdef01234567";
const std::string kOther = "fedcba9876543210fedcba9876543210fedcba98";

class HubCache : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ps_hub_cache_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  // What huggingface_hub writes for one downloaded revision.
  void add_snapshot(const fs::path& cache, const std::string& repo_folder,
                    const std::string& commit, const std::string& ref) {
    fs::path repo = cache / repo_folder;
    fs::create_directories(repo / "blobs");
    fs::create_directories(repo / "snapshots" / commit);
    std::ofstream(repo / "blobs" / ("cfg" + commit)) << "{}";
    fs::create_symlink(fs::path("../../blobs") / ("cfg" + commit),
                       repo / "snapshots" / commit / "config.json");
    if (!ref.empty()) {
      fs::create_directories(repo / "refs");
      std::ofstream(repo / "refs" / ref) << commit;  // no newline, as the Hub writes it
    }
  }

  fs::path root_;
};

TEST_F(HubCache, RootsFollowHuggingFaceHubVariablesInOrder) {
  auto roots = hub_cache_roots({{"HF_HUB_CACHE", "/a"}, {"HF_HOME", "/h"}, {"HOME", "/u"}});
  EXPECT_EQ(roots, (std::vector<std::string>{"/a", "/h/hub", "/u/.cache/huggingface/hub"}));
  roots = hub_cache_roots({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/u"}});
  EXPECT_EQ(roots, (std::vector<std::string>{"/x/huggingface/hub", "/u/.cache/huggingface/hub"}));
  roots = hub_cache_roots({{"HF_HUB_CACHE", "/u/.cache/huggingface/hub"}, {"HOME", "/u"}});
  EXPECT_EQ(roots.size(), 1u);  // the same folder twice is searched once
}

TEST_F(HubCache, HubIdsAreTellableFromPaths) {
  EXPECT_TRUE(looks_like_hub_id("Qwen/Qwen3-0.6B"));
  EXPECT_TRUE(looks_like_hub_id("gpt2"));
  EXPECT_TRUE(looks_like_hub_id("meta-llama/Llama-3.1-8B_v2.x"));
  for (const char* path :
       {"./models/x", "/abs/path", "a/b/c", "../x", "a//b", "", "org/", ".x", "org/-x", "a b/c"}) {
    EXPECT_FALSE(looks_like_hub_id(path)) << path;
  }
}

TEST_F(HubCache, FindsTheSnapshotThatRefsMainNames) {
  fs::path cache = root_ / "hub";
  add_snapshot(cache, "models--Qwen--Qwen3-0.6B", kOther, "");  // an older download
  add_snapshot(cache, "models--Qwen--Qwen3-0.6B", kMain, "main");
  HubLookup found = find_in_hub_cache("Qwen/Qwen3-0.6B", "main", {cache.string()});
  ASSERT_TRUE(found.snapshot.has_value());
  EXPECT_EQ(*found.snapshot, (cache / "models--Qwen--Qwen3-0.6B" / "snapshots" / kMain).string());
  EXPECT_TRUE(fs::exists(fs::path(*found.snapshot) / "config.json"));
  // A commit hash as the revision names its snapshot directly.
  found = find_in_hub_cache("Qwen/Qwen3-0.6B", kOther, {cache.string()});
  ASSERT_TRUE(found.snapshot.has_value());
  EXPECT_NE(found.snapshot->find(kOther), std::string::npos);
}

TEST_F(HubCache, LaterRootsAreSearchedAndBranchesOtherThanMainWork) {
  fs::path empty = root_ / "empty";
  fs::create_directories(empty);
  fs::path home_cache = root_ / "home" / ".cache" / "huggingface" / "hub";
  add_snapshot(home_cache, "models--gpt2", kOther, "v1.0");
  HubLookup found = find_in_hub_cache("gpt2", "v1.0", {empty.string(), home_cache.string()});
  ASSERT_TRUE(found.snapshot.has_value());
  EXPECT_EQ(found.looked.size(), 1u);
  EXPECT_NE(found.looked[0].find((empty / "models--gpt2").string()), std::string::npos);
}

TEST_F(HubCache, MissingModelListsEveryPlaceLooked) {
  fs::path a = root_ / "a";
  fs::path b = root_ / "b";
  add_snapshot(b, "models--Org--Name", kOther, "dev");  // only another branch
  HubLookup found = find_in_hub_cache("Org/Name", "main", {a.string(), b.string()});
  EXPECT_FALSE(found.snapshot.has_value());
  ASSERT_EQ(found.looked.size(), 2u);
  EXPECT_NE(found.looked[0].find((a / "models--Org--Name").string()), std::string::npos);
  EXPECT_NE(found.looked[1].find("refs/main"), std::string::npos) << found.looked[1];
  EXPECT_NE(found.looked[1].find("not downloaded"), std::string::npos) << found.looked[1];
  EXPECT_FALSE(find_in_hub_cache("Org/Name", "main", {}).looked.empty());
}

TEST_F(HubCache, IncompleteOrBrokenEntriesAreSkippedWithAReason) {
  fs::path cache = root_ / "hub";
  add_snapshot(cache, "models--Org--Name", kMain, "main");
  // The blob the snapshot's config.json points at is gone: a dangling link.
  fs::remove(cache / "models--Org--Name" / "blobs" / ("cfg" + kMain));
  HubLookup found = find_in_hub_cache("Org/Name", "main", {cache.string()});
  EXPECT_FALSE(found.snapshot.has_value());
  ASSERT_EQ(found.looked.size(), 1u);
  EXPECT_NE(found.looked[0].find("config.json"), std::string::npos);

  std::ofstream(cache / "models--Org--Name" / "refs" / "main") << "not-a-hash";
  found = find_in_hub_cache("Org/Name", "main", {cache.string()});
  ASSERT_EQ(found.looked.size(), 1u);
  EXPECT_NE(found.looked[0].find("commit hash"), std::string::npos);
}

}  // namespace
}  // namespace ps
