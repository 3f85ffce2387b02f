#include "structured/stack_arena.h"

namespace ps {

StackArena::StackArena() : table_(64, 0), mask_(63) {}

uint64_t StackArena::hash(uint32_t pos, uint32_t parent) {
  uint64_t k = (uint64_t{pos} << 32) | parent;
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}

size_t StackArena::find_slot(uint32_t pos, uint32_t parent) const {
  size_t i = hash(pos, parent) & mask_;
  while (table_[i] != 0) {
    const Node& n = nodes_[table_[i] - 1];
    if (n.pos == pos && n.parent == parent) return i;
    i = (i + 1) & mask_;
  }
  return i;
}

uint32_t StackArena::intern(uint32_t pos, uint32_t parent) {
  size_t slot = find_slot(pos, parent);
  if (table_[slot] != 0) return table_[slot] - 1;
  nodes_.push_back({pos, parent});
  uint32_t id = static_cast<uint32_t>(nodes_.size() - 1);
  table_[slot] = id + 1;
  if (nodes_.size() * 2 > table_.size()) grow();
  return id;
}

void StackArena::grow() {
  // Reinsert in id order, so the table is what inserting the nodes one by one would give
  // (rollback depends on it).
  table_.assign(table_.size() * 2, 0);
  mask_ = table_.size() - 1;
  for (uint32_t id = 0; id < nodes_.size(); ++id) {
    table_[find_slot(nodes_[id].pos, nodes_[id].parent)] = id + 1;
  }
}

void StackArena::rollback(size_t mark) {
  while (nodes_.size() > mark) {
    const Node& n = nodes_.back();
    size_t slot = find_slot(n.pos, n.parent);
    table_[slot] = 0;
    nodes_.pop_back();
  }
}

}  // namespace ps
