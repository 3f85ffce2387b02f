// Dialogue generated from this project's own templates. The hand-written prose alone is too
// short to give ~6000 merges that occur at least twice; recombining its themes deterministically
// gives the trainer enough repeated pairs without anyone having to write 300 KB by hand.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tiny_corpus_parts.h"

namespace ps::tiny_corpus {
namespace {

// A fixed linear congruential generator: the corpus, and so the trained vocab, must be identical
// on every machine and standard library (std::uniform_int_distribution is not).
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed) {}
  uint32_t next(uint32_t bound) {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>((state_ >> 33) % bound);
  }
  template <typename T, size_t N>
  const T& pick(const std::array<T, N>& items) {
    return items[next(N)];
  }

 private:
  uint64_t state_;
};

using Words = std::array<const char*, 12>;

constexpr Words kZhSubjects = {"我",       "你",     "我们", "他们",     "调度器", "模型",
                               "服务引擎", "客户端", "小页", "这个请求", "新用户", "工程师"};
constexpr Words kZhActions = {"正在处理请求",   "释放了缓存块",   "生成了一段回答", "读取模型权重",
                              "计算注意力分数", "检查停止条件",   "分配新的内存块", "发送流式事件",
                              "记录性能日志",   "完成预填充阶段", "等待下一个词元", "共享前缀缓存"};
constexpr Words kZhTimes = {"今天", "现在", "每一步", "下午",     "明天早上", "刚才",
                            "晚上", "周末", "上线前", "测试期间", "高峰时段", "每次请求"};
constexpr Words kZhManners = {"很快地", "慢慢地", "认真地", "安静地", "稳定地", "顺利地",
                              "及时地", "正确地", "反复地", "自动地", "高效地", "小心地"};
constexpr Words kZhQuestions = {
    "什么是键值缓存",   "为什么需要连续批处理", "分页注意力有什么好处", "怎样降低首词延迟",
    "量化会影响精度吗", "什么是前缀共享",       "抢占之后会怎么样",     "温度参数有什么作用",
    "怎么设置随机种子", "流式输出是怎么实现的", "块表记录了什么",       "为什么要比较词元"};
constexpr Words kZhAnswers = {"它保存每一层已经算过的键和值，避免重复计算",
                              "它让结束的序列马上离开，新的请求马上加入，吞吐量更高",
                              "它把缓存切成固定大小的块，几乎没有内存碎片",
                              "可以限制每一步的预填充预算，让解码请求先运行",
                              "会有一点影响，但是通常可以节省一半以上的显存",
                              "相同开头的请求共用同一批缓存块，不用重新计算",
                              "被抢占的序列回到等待队列，以后重新计算，不会丢失",
                              "温度越高，输出越随机；温度越低，输出越确定",
                              "在请求里写上种子，同样的输入就会得到同样的输出",
                              "每生成一个词元就把新增的文字发给客户端",
                              "它记录逻辑块和物理块之间的对应关系",
                              "哈希值可能冲突，只有词元相同才能复用缓存"};
constexpr Words kEnSubjects = {"I",          "You",         "We",         "They",  "The scheduler",
                               "The model",  "The engine",  "The client", "Paige", "This request",
                               "A new user", "The engineer"};
constexpr Words kEnActions = {
    "is handling a request",      "released a cache block",        "generated a short answer",
    "is reading the weights",     "computed attention scores",     "checked the stop conditions",
    "allocated a new block",      "sent a streaming event",        "wrote a latency report",
    "finished the prefill phase", "is waiting for the next token", "reused the prefix cache"};
constexpr Words kEnTimes = {"today",           "right now",        "at every step",
                            "this afternoon",  "tomorrow morning", "a moment ago",
                            "tonight",         "over the weekend", "before release",
                            "during the test", "at peak hours",    "for each request"};
constexpr Words kEnManners = {"quickly",  "slowly",        "carefully",   "quietly",
                              "steadily", "smoothly",      "on time",     "correctly",
                              "again",    "automatically", "efficiently", "with care"};
constexpr Words kEnQuestions = {"What is a KV cache",
                                "Why do we need continuous batching",
                                "What does paged attention buy us",
                                "How can we lower the time to first token",
                                "Does quantization hurt accuracy",
                                "What is prefix sharing",
                                "What happens after preemption",
                                "What does the temperature do",
                                "How do I set a random seed",
                                "How does streaming work",
                                "What does a block table store",
                                "Why compare the tokens after a hash hit"};
constexpr Words kEnAnswers = {
    "It keeps the keys and values every layer already computed, so nothing is recomputed",
    "Finished sequences leave at once and new requests join at once, so throughput goes up",
    "It cuts the cache into fixed-size blocks, so there is almost no fragmentation",
    "Limit the prefill budget per step so that decoding requests run first",
    "A little, but it usually saves more than half of the memory",
    "Requests with the same beginning share one set of cache blocks",
    "The preempted sequence waits in the queue and is recomputed later, never lost",
    "Higher temperature gives more random text, lower temperature more predictable text",
    "Put a seed in the request and the same input gives the same output",
    "Each new token's text is sent to the client as soon as it is known",
    "It maps each logical block of a sequence to a physical block",
    "Hashes can collide, so a block is reused only when its tokens are equal"};
constexpr Words kNames = {"小明", "小红", "老王",   "Alice", "Bob",    "Chen",
                          "Zoë",  "José", "Ingrid", "李雷",  "韩梅梅", "Émile"};
constexpr Words kEmoji = {"😀", "👍", "🎉", "🚀", "✨", "🙏", "🤖", "🔥", "💡", "✅", "👋", "❤️"};

std::string number(Lcg& rng) {
  return std::to_string(rng.next(5000));
}

struct Entry {
  std::string zh;
  std::string en;
};

std::vector<Entry> lexicon_entries() {
  std::vector<Entry> entries;
  std::string_view text = lexicon();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find_first_of(";\n", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(pos, end - pos);
    size_t eq = item.find('=');
    if (eq != std::string_view::npos) {
      entries.push_back({std::string(item.substr(0, eq)), std::string(item.substr(eq + 1))});
    }
    pos = end + 1;
  }
  return entries;
}

}  // namespace

std::string generated_dialogue() {
  Lcg rng(20240517);
  std::string out;
  out.reserve(1 << 20);
  for (int i = 0; i < 2600; ++i) {
    const bool zh = rng.next(2) == 0;
    out += "<|im_start|>user\n";
    switch (rng.next(4)) {
      case 0:
        out += zh ? std::string("你好，") + rng.pick(kNames) + "！" + rng.pick(kZhQuestions) + "？"
                  : std::string("Hello, ") + rng.pick(kNames) + "! " + rng.pick(kEnQuestions) + "?";
        break;
      case 1:
        out += zh ? std::string(rng.pick(kZhQuestions)) + "？请简单回答。"
                  : std::string(rng.pick(kEnQuestions)) + "? Please keep it short.";
        break;
      case 2:
        out += zh ? std::string("你是谁？") + rng.pick(kEmoji)
                  : "Who are you? " + std::string(rng.pick(kEmoji));
        break;
      default:
        out += zh ? std::string("第") + number(rng) + "个请求用了" + number(rng) + "毫秒，正常吗？"
                  : "Request #" + number(rng) + " took " + number(rng) + " ms, is that normal?";
        break;
    }
    out += "<|im_end|>\n<|im_start|>assistant\n";
    if (zh) {
      out += std::string(rng.pick(kZhTimes)) + "，" + rng.pick(kZhSubjects) + rng.pick(kZhManners) +
             rng.pick(kZhActions) + "。" + rng.pick(kZhAnswers) + "。";
    } else {
      out += std::string(rng.pick(kEnSubjects)) + " " + rng.pick(kEnActions) + " " +
             rng.pick(kEnManners) + " " + rng.pick(kEnTimes) + ". " + rng.pick(kEnAnswers) + ".";
    }
    if (rng.next(3) == 0) out += std::string(" ") + rng.pick(kEmoji);
    out += "<|im_end|>\n";
  }
  return out;
}

}  // namespace ps::tiny_corpus

namespace ps::tiny_corpus {

// Every lexicon entry in several sentence frames, each frame at least twice across the passes,
// so each word's merges clear the trainer's minimum pair frequency.
std::string generated_glossary() {
  const std::vector<Entry> entries = lexicon_entries();
  Lcg rng(7);
  std::string out;
  out.reserve(1 << 20);
  for (int pass = 0; pass < 3; ++pass) {
    for (size_t i = 0; i < entries.size(); ++i) {
      const Entry& e = entries[i];
      const Entry& other = entries[rng.next(static_cast<uint32_t>(entries.size()))];
      switch ((i + pass) % 4) {
        case 0:
          out += "“" + e.zh + "”的英文是 " + e.en + "。The Chinese word for " + e.en + " is " +
                 e.zh + ".\n";
          break;
        case 1:
          out += "我今天想聊聊" + e.zh + "和" + other.zh + "。Let's talk about " + e.en + " and " +
                 other.en + " today.\n";
          break;
        case 2:
          out += "用户：" + e.zh + "重要吗？\n助手：" + e.zh + "很重要，" + other.zh +
                 "也一样。\nUser: Is " + e.en + " important?\nAssistant: Yes, " + e.en +
                 " matters, and so does " + other.en + ".\n";
          break;
        default:
          out += "- " + e.en + " (" + e.zh + "), see also " + other.en + " (" + other.zh + ")\n";
          break;
      }
    }
  }
  return out;
}

}  // namespace ps::tiny_corpus
