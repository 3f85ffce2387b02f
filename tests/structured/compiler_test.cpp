// GrammarCompiler: cache by content (thread-safe), and limits that end in a StructuredError
// naming the limit.
#include <gtest/gtest.h>

#include <thread>

#include "test_vocab.h"

namespace ps {
namespace {

ConstraintSpec gbnf(const std::string& text, const std::string& trigger = {}) {
  return {ConstraintSpec::Kind::kGbnf, text, {}, trigger};
}

TEST(GrammarCompiler, CachesByContent) {
  auto v = test::byte_vocab();
  GrammarCompiler c(v, {test::eos_of(*v)});
  auto a = c.compile(gbnf(R"(root ::= "a"+)"));
  auto b = c.compile(gbnf(R"(root ::= "a"+)"));
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(c.cache_hits(), 1u);
  EXPECT_NE(c.compile(gbnf(R"(root ::= "a"+)", "go")).get(), a.get());  // trigger is content
  EXPECT_NE(c.compile(gbnf(R"(root ::= "a"*)")).get(), a.get());
  EXPECT_EQ(c.cache_size(), 3u);
}

TEST(GrammarCompiler, ConcurrentCompilesAgree) {
  auto v = test::byte_vocab();
  GrammarCompiler c(v, {test::eos_of(*v)});
  std::vector<std::shared_ptr<const CompiledGrammar>> got(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] { got[i] = c.compile(gbnf(R"(root ::= [a-z]{1,20} "!")")); });
  }
  for (auto& t : threads) t.join();
  for (int i = 1; i < 8; ++i) EXPECT_EQ(got[i].get(), got[0].get());
  EXPECT_TRUE(test::matches(got[0], "hello!"));
}

TEST(GrammarCompiler, CacheIsBounded) {
  auto v = test::byte_vocab();
  CompileLimits limits;
  limits.max_cached_grammars = 2;
  GrammarCompiler c(v, {test::eos_of(*v)}, limits);
  for (int i = 0; i < 5; ++i) c.compile(gbnf("root ::= \"" + std::to_string(i) + "\""));
  EXPECT_EQ(c.cache_size(), 2u);
}

void expect_limit(const CompileLimits& limits, const std::string& text, const std::string& part) {
  auto v = test::byte_vocab({"ab", "abc", "hello"});
  GrammarCompiler c(v, {test::eos_of(*v)}, limits);
  try {
    c.compile(gbnf(text));
    FAIL() << "no error for " << text;
  } catch (const StructuredError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(GrammarCompiler, LimitsNameTheLimit) {
  CompileLimits time;
  time.max_compile_seconds = 0;
  expect_limit(time, R"(root ::= [a-z]{0,50})", "time limit of 0 s");
  CompileLimits positions;
  positions.max_positions = 10;
  expect_limit(positions, R"(root ::= [a-z]{11})", "over the limit of 10");
  CompileLimits memory;
  memory.max_mask_bytes = 64;
  expect_limit(memory, R"(root ::= .{0,40})", "limit of 64 bytes");
  CompileLimits trigger;
  trigger.max_trigger_bytes = 4;
  {
    auto v = test::byte_vocab();
    GrammarCompiler c(v, {test::eos_of(*v)}, trigger);
    try {
      c.compile(gbnf(R"(root ::= "x")", "<tool_call>"));
      FAIL();
    } catch (const StructuredError& e) {
      EXPECT_NE(std::string(e.what()).find("trigger is 11 bytes, over the limit of 4"),
                std::string::npos)
          << e.what();
      EXPECT_EQ(e.param, "trigger");
    }
  }
  CompileLimits rules;
  rules.gbnf.max_rules = 5;
  expect_limit(rules, R"(root ::= ("a" | "b")* ("c")+ "d"? ("e"){2,4})", "more than 5 rules");
}

TEST(GrammarCompiler, BadGrammarIsAStructuredError) {
  auto v = test::byte_vocab();
  GrammarCompiler c(v, {test::eos_of(*v)});
  EXPECT_THROW(c.compile(gbnf("root ::= (")), StructuredError);
  EXPECT_EQ(c.cache_size(), 0u);  // failures are not cached
}

}  // namespace
}  // namespace ps
