// Code, numbers and emoji for the tiny model's tokenizer, written for this project.
#include "tokenizer/tiny_corpus_parts.h"

namespace ps::tiny_corpus {

std::string_view code_and_symbols() {
  return R"CODE(def count_free_blocks(pool):
    """Return how many blocks in the pool have no owner."""
    return sum(1 for block in pool.blocks if block.ref_count == 0)


class BlockPool:
    def __init__(self, num_blocks: int, block_size: int = 16):
        self.block_size = block_size
        self.free = list(range(num_blocks))
        self.ref_count = [0] * num_blocks

    def allocate(self) -> int:
        if not self.free:
            raise RuntimeError("out of KV cache blocks; lower --max-num-seqs")
        block_id = self.free.pop()
        self.ref_count[block_id] = 1
        return block_id

    def release(self, block_id: int) -> None:
        self.ref_count[block_id] -= 1
        if self.ref_count[block_id] == 0:
            self.free.append(block_id)


def greedy_decode(model, prompt_ids, max_new_tokens=32, eos_id=2):
    ids = list(prompt_ids)
    for _ in range(max_new_tokens):
        logits = model(ids)[-1]
        next_id = int(logits.argmax())
        ids.append(next_id)
        if next_id == eos_id:
            break
    return ids[len(prompt_ids):]


for i, name in enumerate(["alpha", "beta", "gamma"]):
    print(f"{i}: {name.upper()} -> {len(name)} chars")

import json
with open("config.json", "r", encoding="utf-8") as f:
    config = json.load(f)
print(config["hidden_size"], config.get("num_key_value_heads", 8))

#include <cstdint>
#include <string>
#include <vector>

namespace demo {

struct Block {
  int32_t id = -1;
  int32_t ref_count = 0;
  uint64_t hash = 0;
};

class BlockTable {
 public:
  void append(int32_t block_id) { blocks_.push_back(block_id); }
  int32_t size() const { return static_cast<int32_t>(blocks_.size()); }
  int32_t operator[](int32_t i) const { return blocks_.at(i); }

 private:
  std::vector<int32_t> blocks_;
};

int64_t slot_for(const BlockTable& table, int64_t position, int64_t block_size) {
  return static_cast<int64_t>(table[position / block_size]) * block_size + position % block_size;
}

}  // namespace demo

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (const auto& a : args) {
    if (a == "--help") {
      std::printf("usage: serve --model DIR --port 8080\n");
      return 0;
    }
  }
  return 1;
}

for (int i = 0; i < n; ++i) { sum += x[i] * w[i]; }
if (x != nullptr && y >= 0 || z <= 10) { return -1; }
auto it = map.find(key); if (it == map.end()) { throw std::runtime_error("missing key"); }
const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
curl -s http://localhost:8080/v1/chat/completions -H "Content-Type: application/json" -d '{"model": "tiny", "messages": [{"role": "user", "content": "你好"}]}'
{"id": "chatcmpl-42", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop"}]}
SELECT id, name FROM users WHERE age >= 18 ORDER BY name LIMIT 10;
$ cmake -S . -B build -G Ninja && cmake --build build -j2 && ctest --test-dir build
git log --oneline | head -n 5

Numbers: 0 1 2 3 4 5 6 7 8 9 10 42 100 256 512 1024 2048 4096 8192 16384 32768 65536
3.14159 2.71828 1e-5 6.02e23 -273.15 99.9% 1,000,000 2024-05-17 12:30:45 v1.2.3 0x7fff
Prices: $19.99, €25, ¥1200, £7.50. Temperatures: 21°C, 70°F. Ratio 16:9, score 3/4.
第1章 第2节 共100页 2023年10月1日 下午3点15分 温度25度 电量87%

Emoji: 😀 😂 🥰 😎 🤔 🙏 👍 👋 🎉 🔥 ✨ 🚀 💡 📚 🧠 🤖 ❤️ 💻 ⏱️ ✅ ❌ ⚠️
Families and flags: 👨‍👩‍👧‍👦 👩‍💻 🧑‍🚀 🏳️‍🌈 🇨🇳 🇺🇸 🇯🇵 🇫🇷 👍🏽 👋🏻
Great job 🎉🎉! The server is up 🚀 and the tests pass ✅. 好的👍 谢谢🙏 太棒了🔥
)CODE";
}

}  // namespace ps::tiny_corpus
