#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ps {

// The matcher's stacks, stored as a tree of shared frames: a node is (element position,
// parent node), where the parent is the frame to return to. Nodes are hash-consed, so two
// stacks are equal exactly when their top node ids are, and a set of stacks deduplicates by
// id. Exploration (mask building) takes a checkpoint and rolls back what it created.
class StackArena {
 public:
  // Below the root rule's frame: popping to it means the root matched.
  static constexpr uint32_t kAccept = 0xFFFFFFFFu;
  // Below a probe frame when building the per-grammar cache: popping to it means the outcome
  // depends on the caller's stack.
  static constexpr uint32_t kContext = 0xFFFFFFFEu;

  StackArena();
  uint32_t intern(uint32_t pos, uint32_t parent);
  uint32_t pos(uint32_t node) const { return nodes_[node].pos; }
  uint32_t parent(uint32_t node) const { return nodes_[node].parent; }
  size_t size() const { return nodes_.size(); }

  size_t checkpoint() const { return nodes_.size(); }
  // Forgets every node made after `mark` (newest first, which restores the hash table exactly:
  // with linear probing, removing entries in reverse insertion order is always safe).
  void rollback(size_t mark);

 private:
  struct Node {
    uint32_t pos;
    uint32_t parent;
  };
  static uint64_t hash(uint32_t pos, uint32_t parent);
  size_t find_slot(uint32_t pos, uint32_t parent) const;
  void grow();

  std::vector<Node> nodes_;
  std::vector<uint32_t> table_;  // node id + 1; 0 = empty
  size_t mask_ = 0;
};

}  // namespace ps
