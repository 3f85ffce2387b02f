#include "kvcache/kv_pools.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

KvPools::KvPools(KvPoolsConfig config)
    : config_(std::move(config)),
      full_(config_.num_blocks, config_.block_size, config_.enable_prefix_caching, config_.hasher) {
  if (config_.num_sliding_blocks < 0) {
    throw std::invalid_argument("KvPools: negative sliding pool size");
  }
  if (config_.num_sliding_blocks > 0) {
    if (config_.sliding_window <= 0) {
      throw std::invalid_argument("KvPools: a sliding pool needs a window >= 1");
    }
    sliding_ = std::make_unique<BlockManager>(config_.num_sliding_blocks, config_.block_size,
                                              config_.enable_prefix_caching, config_.hasher);
  }
}

KvMatch KvPools::no_match(uint64_t root) const {
  KvMatch m;
  m.full.root = m.full.chain_key = root;
  m.sliding = m.full;
  return m;
}

int32_t KvPools::first_block_in_window(int32_t position) const {
  return std::max(0, position - config_.sliding_window + 1) / config_.block_size;
}

KvMatch KvPools::match_prefix(std::span<const int32_t> tokens, uint64_t root) const {
  KvMatch m;
  m.full = full_.match_prefix(tokens, root);
  if (!sliding_) return m;
  // A hit of n blocks computes on from position n * block_size, whose window reaches back to
  // block first_block_in_window(n * block_size): the sliding pool needs the twins of the full
  // match's blocks from there to n - 1, and nothing before. A missing twin at i cuts the hit
  // to i blocks (every longer hit's window still reaches i).
  auto n = static_cast<int32_t>(m.full.blocks.size());
  std::vector<int32_t> found;
  while (n > 0) {
    found.assign(static_cast<size_t>(n), -1);
    int32_t missing = -1;
    for (int32_t i = first_block_in_window(n * config_.block_size); i < n; ++i) {
      const int32_t f = m.full.blocks[i];
      found[i] = sliding_->find_twin(full_.key_of(f), full_.serial_of(f));
      if (found[i] < 0) {
        missing = i;
        break;
      }
    }
    if (missing < 0) break;
    n = missing;
  }
  if (n == 0) found.clear();
  m.full = full_.shorten(m.full, n);
  m.sliding = sliding_->match_of(std::move(found), m.full.num_query_tokens, root);
  return m;
}

KvMatch KvPools::cut(const KvMatch& match, int32_t num_blocks) const {
  if (sliding_) throw std::logic_error("KvPools::cut: not with a sliding-window pool");
  KvMatch m;
  m.full = full_.shorten(match.full, num_blocks);
  return m;
}

bool KvPools::can_allocate(const KvMatch& match, int32_t num_slots) const {
  return full_.can_allocate(match.full, num_slots) &&
         (!sliding_ || sliding_->can_allocate(match.sliding, num_slots));
}

void KvPools::allocate(int64_t seq, const KvMatch& match, int32_t num_slots) {
  if (!can_allocate(match, num_slots)) {
    throw std::logic_error("KvPools: allocate() without room in every pool");
  }
  full_.allocate(seq, match.full, num_slots);
  if (sliding_) sliding_->allocate(seq, match.sliding, num_slots);
}

int32_t KvPools::max_slots(int64_t seq) const {
  if (!full_.has_table(seq)) return 0;
  // Holes count as covered positions: a table's length is what it spans, not what it holds.
  auto slots = [&](const BlockManager& pool) {
    return (static_cast<int32_t>(pool.block_table(seq).size()) + pool.num_available_blocks()) *
           config_.block_size;
  };
  return sliding_ ? std::min(slots(full_), slots(*sliding_)) : slots(full_);
}

bool KvPools::append_slots(int64_t seq, int32_t num_slots) {
  if (sliding_ && (full_.blocks_needed(seq, num_slots) > full_.num_available_blocks() ||
                   sliding_->blocks_needed(seq, num_slots) > sliding_->num_available_blocks())) {
    return false;
  }
  if (!full_.append_slots(seq, num_slots)) return false;
  if (sliding_ && !sliding_->append_slots(seq, num_slots)) {
    throw std::logic_error("KvPools: sliding pool refused blocks it had counted available");
  }
  return true;
}

void KvPools::truncate(int64_t seq, int32_t num_slots) {
  full_.truncate(seq, num_slots);
  if (sliding_) sliding_->truncate(seq, num_slots);
}

void KvPools::publish(int64_t seq, std::span<const int32_t> tokens, int32_t num_computed) {
  full_.publish(seq, tokens, num_computed);
  if (!sliding_) return;
  const int32_t before = sliding_->num_published(seq);
  sliding_->publish(seq, tokens, num_computed);
  const int32_t after = sliding_->num_published(seq);
  if (after == before) return;
  const std::vector<int32_t>& full_table = full_.block_table(seq);
  std::vector<uint64_t> serials;
  for (int32_t i = before; i < after; ++i) serials.push_back(full_.serial_of(full_table[i]));
  sliding_->set_twins(seq, before, serials);
}

int32_t KvPools::release_outside_window(int64_t seq, int32_t num_computed) {
  if (!sliding_) return 0;
  // The next query is at position num_computed: its window's first block is the first kept.
  const int32_t first_kept = first_block_in_window(num_computed);
  if (first_kept == 0) return 0;
  return sliding_->release_leading(seq, first_kept);
}

void KvPools::free(int64_t seq) {
  full_.free(seq);
  if (sliding_) sliding_->free(seq);
}

void KvPools::check_integrity() const {
  full_.check_integrity();
  if (!sliding_) return;
  sliding_->check_integrity();
  const std::vector<int64_t> a = full_.table_ids(), b = sliding_->table_ids();
  if (a != b) {
    throw std::logic_error("KvPools: the full pool holds tables for " + std::to_string(a.size()) +
                           " sequences and the sliding pool for " + std::to_string(b.size()) +
                           ", or not the same ones");
  }
  for (int64_t seq : a) {
    if (full_.block_table(seq).size() != sliding_->block_table(seq).size()) {
      throw std::logic_error("KvPools: sequence " + std::to_string(seq) +
                             "'s tables span different lengths in the two pools");
    }
  }
}

}  // namespace ps
