#include "kvcache/block_manager.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace ps {

namespace {

const std::vector<int32_t> kNoBlocks;

}  // namespace

BlockManager::BlockManager(int32_t num_blocks, int32_t block_size, bool enable_prefix_caching,
                           BlockHasher hasher)
    : block_size_(block_size),
      enable_prefix_caching_(enable_prefix_caching),
      hasher_(hasher ? std::move(hasher) : BlockHasher(default_block_hash)) {
  if (num_blocks <= 0 || block_size <= 0) {
    throw std::invalid_argument("BlockManager needs num_blocks > 0 and block_size > 0, got " +
                                std::to_string(num_blocks) + " and " + std::to_string(block_size));
  }
  blocks_.resize(num_blocks);
  free_.reserve(num_blocks);
  // Reversed so that block 0 is handed out first: plans are easier to read in tests.
  for (int32_t id = num_blocks - 1; id >= 0; --id) free_.push_back(id);
}

// ---- block transitions -------------------------------------------------------------------

// free -> active, or cached -> free -> active when no block is free.
int32_t BlockManager::take() {
  if (free_.empty()) {
    if (lru_.empty()) fail("take(): no free or cached block; callers must check availability");
    evict(lru_.front());
  }
  const int32_t id = free_.back();
  free_.pop_back();
  Block& b = blocks_[id];
  if (b.state != State::kFree || b.ref_count != 0 || b.hashed) fail("take(): block not free");
  b.state = State::kActive;
  b.ref_count = 1;
  return id;
}

// cached -> active, or active -> active with one more holder.
void BlockManager::share(int32_t id) {
  Block& b = blocks_[id];
  if (!b.hashed) fail("share(): only published blocks are shared, block " + std::to_string(id));
  if (b.state == State::kCached) {
    lru_.erase(b.lru_pos);
    b.state = State::kActive;
  } else if (b.state != State::kActive) {
    fail("share(): block " + std::to_string(id) + " is free");
  }
  ++b.ref_count;
}

// active -> active (others still hold it) | cached (published) | free (partial or unpublished).
void BlockManager::release(int32_t id) {
  Block& b = blocks_[id];
  if (b.state != State::kActive || b.ref_count <= 0) {
    fail("release(): block " + std::to_string(id) + " is not active");
  }
  if (--b.ref_count > 0) return;
  if (b.hashed) {
    b.state = State::kCached;
    b.lru_pos = lru_.insert(lru_.end(), id);
  } else {
    b.state = State::kFree;
    b.tokens.clear();
    free_.push_back(id);
  }
}

// cached -> free: the block leaves the prefix cache for good.
void BlockManager::evict(int32_t id) {
  Block& b = blocks_[id];
  if (b.state != State::kCached || b.ref_count != 0) {
    fail("evict(): block " + std::to_string(id) + " is not cached");
  }
  auto [lo, hi] = index_.equal_range(b.key);
  auto it = std::find_if(lo, hi, [id](const auto& kv) { return kv.second == id; });
  if (it == hi) fail("evict(): cached block " + std::to_string(id) + " missing from the index");
  index_.erase(it);
  lru_.erase(b.lru_pos);
  if (record_events_) events_.emplace_back(BlockRemoved{b.key});
  b = Block{};
  free_.push_back(id);
}

// active (unpublished) -> active (published): reachable by later prefix matches.
void BlockManager::index(int32_t id, uint64_t key, uint64_t parent_serial, uint64_t root,
                         std::span<const int32_t> tokens) {
  Block& b = blocks_[id];
  if (b.state != State::kActive || b.hashed) {
    fail("index(): block " + std::to_string(id) + " must be active and unpublished");
  }
  b.hashed = true;
  b.key = key;
  b.serial = next_serial_++;
  b.parent_serial = parent_serial;
  b.root = root;
  b.tokens.assign(tokens.begin(), tokens.end());
  index_.emplace(key, id);
}

// A hit needs the same key, the same parent block content (serial), the same root and the same
// tokens: the key alone may collide.
int32_t BlockManager::lookup(uint64_t key, uint64_t parent_serial, uint64_t root,
                             std::span<const int32_t> tokens) const {
  auto [lo, hi] = index_.equal_range(key);
  for (auto it = lo; it != hi; ++it) {
    const Block& b = blocks_[it->second];
    if (b.parent_serial == parent_serial && b.root == root &&
        std::ranges::equal(b.tokens, tokens)) {
      return it->second;
    }
  }
  return -1;
}

// ---- sequences ---------------------------------------------------------------------------

PrefixMatch BlockManager::match_prefix(std::span<const int32_t> tokens, uint64_t root) const {
  PrefixMatch m;
  m.root = root;
  m.chain_key = root;
  m.num_query_tokens = static_cast<int32_t>(tokens.size());
  if (!enable_prefix_caching_ || tokens.empty()) return m;
  // (n - 1) / bs: the block holding the last token is never matched, even when full.
  const size_t max_blocks = (tokens.size() - 1) / block_size_;
  for (size_t i = 0; i < max_blocks; ++i) {
    auto chunk = tokens.subspan(i * block_size_, block_size_);
    const uint64_t key = hasher_(m.chain_key, chunk);
    const int32_t id = lookup(key, m.chain_serial, root, chunk);
    if (id < 0) break;
    m.blocks.push_back(id);
    if (blocks_[id].state == State::kCached) ++m.num_idle;
    m.chain_key = key;
    m.chain_serial = blocks_[id].serial;
  }
  m.num_tokens = static_cast<int32_t>(m.blocks.size()) * block_size_;
  return m;
}

bool BlockManager::can_allocate(const PrefixMatch& match, int32_t num_slots) const {
  const int32_t fresh = blocks_for_tokens(num_slots) - static_cast<int32_t>(match.blocks.size());
  // Idle matched blocks turn active, so they stop counting as evictable.
  return fresh <= num_available_blocks() - match.num_idle;
}

void BlockManager::allocate(int64_t seq, const PrefixMatch& match, int32_t num_slots) {
  if (tables_.count(seq)) fail("allocate(): sequence " + std::to_string(seq) + " has blocks");
  if (num_slots < match.num_tokens) fail("allocate(): fewer slots than matched tokens");
  if (!can_allocate(match, num_slots)) fail("allocate(): pool cannot hold the sequence");
  Table& t = tables_[seq];
  // Share the matched blocks before taking fresh ones, so eviction cannot pick them. A hole
  // (a sliding pool's match, kv_pools.h) is a position no query of this sequence will read.
  for (int32_t id : match.blocks) {
    if (id >= 0) share(id);
  }
  t.blocks = match.blocks;
  t.num_published = static_cast<int32_t>(match.blocks.size());
  t.chain_key = match.chain_key;
  t.chain_serial = match.chain_serial;
  t.root = match.root;
  const int32_t want = blocks_for_tokens(num_slots);
  while (static_cast<int32_t>(t.blocks.size()) < want) t.blocks.push_back(take());
  if (enable_prefix_caching_) {
    prefix_queries_ += match.num_query_tokens;
    prefix_hits_ += match.num_tokens;
  }
}

int32_t BlockManager::blocks_needed(int64_t seq, int32_t num_slots) const {
  auto it = tables_.find(seq);
  const int32_t have = it == tables_.end() ? 0 : static_cast<int32_t>(it->second.blocks.size());
  return std::max(0, blocks_for_tokens(num_slots) - have);
}

bool BlockManager::append_slots(int64_t seq, int32_t num_slots) {
  Table& t = table_of(seq);
  const int32_t need = blocks_for_tokens(num_slots) - static_cast<int32_t>(t.blocks.size());
  if (need <= 0) return true;
  if (need > num_available_blocks()) return false;
  for (int32_t i = 0; i < need; ++i) t.blocks.push_back(take());
  return true;
}

void BlockManager::truncate(int64_t seq, int32_t num_slots) {
  Table& t = table_of(seq);
  const int32_t keep = blocks_for_tokens(std::max(num_slots, 0));
  if (keep < t.num_published) {
    fail("truncate(): sequence " + std::to_string(seq) + " would drop published blocks");
  }
  while (static_cast<int32_t>(t.blocks.size()) > keep) {
    const int32_t id = t.blocks.back();
    if (id < 0)
      fail("truncate(): sequence " + std::to_string(seq) + " would drop a released block");
    if (blocks_[id].hashed || blocks_[id].ref_count != 1) {
      fail("truncate(): tail block " + std::to_string(id) + " of sequence " + std::to_string(seq) +
           " is published or shared");
    }
    t.blocks.pop_back();
    release(id);  // active -> free
  }
}

void BlockManager::publish(int64_t seq, std::span<const int32_t> tokens, int32_t num_computed) {
  if (!enable_prefix_caching_) return;
  Table& t = table_of(seq);
  if (num_computed > static_cast<int32_t>(tokens.size()) ||
      num_computed > static_cast<int32_t>(t.blocks.size()) * block_size_) {
    fail("publish(): sequence " + std::to_string(seq) + " computed more tokens than it holds");
  }
  const int32_t full = num_computed / block_size_;
  // One BlockStored per run of consecutive newly indexed blocks; a deduplicated block ends it.
  BlockStored run;
  const auto flush = [&] {
    if (!run.hashes.empty()) events_.emplace_back(std::move(run));
    run = BlockStored{};
  };
  for (int32_t i = t.num_published; i < full; ++i) {
    auto chunk = tokens.subspan(static_cast<size_t>(i) * block_size_, block_size_);
    const uint64_t key = hasher_(t.chain_key, chunk);
    const int32_t own = t.blocks[i];
    const int32_t existing = lookup(key, t.chain_serial, t.root, chunk);
    if (existing >= 0) {
      // Another sequence published the same prefix first: hold its copy, drop ours.
      share(existing);
      t.blocks[i] = existing;
      release(own);
      if (record_events_) flush();
    } else {
      index(own, key, t.chain_serial, t.root, chunk);
      if (record_events_) {
        if (run.hashes.empty()) {
          if (i > 0) run.parent = t.chain_key;
          run.root = t.root;
        }
        run.hashes.push_back(key);
        run.token_ids.insert(run.token_ids.end(), chunk.begin(), chunk.end());
      }
    }
    t.chain_key = key;
    t.chain_serial = blocks_[t.blocks[i]].serial;
    t.num_published = i + 1;
  }
  if (record_events_) flush();
}

std::vector<BlockEvent> BlockManager::take_events() {
  return std::exchange(events_, {});
}

std::vector<uint64_t> BlockManager::published_keys() const {
  std::vector<uint64_t> keys;
  keys.reserve(index_.size());
  for (const auto& [key, id] : index_) keys.push_back(key);
  return keys;
}

int32_t BlockManager::release_leading(int64_t seq, int32_t num_blocks) {
  Table& t = table_of(seq);
  int32_t end = std::min(num_blocks, static_cast<int32_t>(t.blocks.size()));
  // A block the prefix cache has not seen yet would be lost for good; keep it until published.
  if (enable_prefix_caching_) end = std::min(end, t.num_published);
  int32_t released = 0;
  // Head first: the oldest blocks reach the LRU first and are evicted first.
  for (int32_t i = 0; i < end; ++i) {
    if (t.blocks[i] < 0) continue;
    release(t.blocks[i]);
    t.blocks[i] = -1;
    ++released;
  }
  return released;
}

void BlockManager::set_twins(int64_t seq, int32_t from_block,
                             std::span<const uint64_t> full_serials) {
  Table& t = table_of(seq);
  for (size_t k = 0; k < full_serials.size(); ++k) {
    const size_t i = static_cast<size_t>(from_block) + k;
    if (i >= static_cast<size_t>(t.num_published) || t.blocks[i] < 0) {
      fail("set_twins(): block " + std::to_string(i) + " of sequence " + std::to_string(seq) +
           " is not published");
    }
    // A deduplicated block gets the current twin: it holds the same exact prefix.
    blocks_[t.blocks[i]].twin = full_serials[k];
  }
}

int32_t BlockManager::find_twin(uint64_t key, uint64_t twin) const {
  auto [lo, hi] = index_.equal_range(key);
  for (auto it = lo; it != hi; ++it) {
    if (blocks_[it->second].twin == twin) return it->second;
  }
  return -1;
}

PrefixMatch BlockManager::match_of(std::vector<int32_t> blocks, int32_t num_query_tokens,
                                   uint64_t root) const {
  PrefixMatch m;
  m.root = root;
  m.chain_key = root;
  m.num_query_tokens = num_query_tokens;
  if (!blocks.empty()) {
    const int32_t last = blocks.back();
    if (last < 0) fail("match_of(): the last block of a match is a hole");
    m.chain_key = blocks_[last].key;
    m.chain_serial = blocks_[last].serial;
  }
  for (int32_t id : blocks) m.num_idle += id >= 0 && blocks_[id].state == State::kCached;
  m.num_tokens = static_cast<int32_t>(blocks.size()) * block_size_;
  m.blocks = std::move(blocks);
  return m;
}

int32_t BlockManager::num_published(int64_t seq) const {
  auto it = tables_.find(seq);
  return it == tables_.end() ? 0 : it->second.num_published;
}

std::vector<int64_t> BlockManager::table_ids() const {
  std::vector<int64_t> ids;
  ids.reserve(tables_.size());
  for (const auto& [seq, table] : tables_) ids.push_back(seq);
  std::ranges::sort(ids);
  return ids;
}

int32_t BlockManager::num_held_blocks(int64_t seq) const {
  const std::vector<int32_t>& blocks = block_table(seq);
  return static_cast<int32_t>(std::ranges::count_if(blocks, [](int32_t id) { return id >= 0; }));
}

PrefixMatch BlockManager::shorten(const PrefixMatch& match, int32_t num_blocks) const {
  if (num_blocks < 0 || num_blocks >= static_cast<int32_t>(match.blocks.size())) return match;
  std::vector<int32_t> kept(match.blocks.begin(), match.blocks.begin() + num_blocks);
  // match_of() fails if the cut ends on a hole: a chain cannot continue from a block not held.
  return match_of(std::move(kept), match.num_query_tokens, match.root);
}

void BlockManager::free(int64_t seq) {
  auto it = tables_.find(seq);
  if (it == tables_.end()) return;
  // Tail first, so that a sequence's last blocks are evicted before its first ones: a prefix
  // is only useful while its head is cached.
  const std::vector<int32_t>& blocks = it->second.blocks;
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {
    if (*b >= 0) release(*b);
  }
  tables_.erase(it);
}

const std::vector<int32_t>& BlockManager::block_table(int64_t seq) const {
  auto it = tables_.find(seq);
  return it == tables_.end() ? kNoBlocks : it->second.blocks;
}

BlockManager::Table& BlockManager::table_of(int64_t seq) {
  auto it = tables_.find(seq);
  if (it == tables_.end()) fail("sequence " + std::to_string(seq) + " has no block table");
  return it->second;
}

void BlockManager::fail(const std::string& what) const {
  throw std::logic_error("BlockManager: " + what);
}

}  // namespace ps
