// Hostile input: real templates with random bytes inserted, deleted and replaced, rendered
// with small limits. Every one must render or fail with a TemplateError: no other exception,
// no crash (run it under the ASan build), no hang.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chat/jinja_template.h"

namespace {

namespace fs = std::filesystem;

std::vector<std::string> corpus() {
  std::vector<std::string> out;
  for (const auto& e :
       fs::directory_iterator(std::string(PAGEDSERVE_SOURCE_DIR) + "/tests/chat/templates")) {
    if (e.path().extension() != ".jinja") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    out.push_back(s.str());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string mutate(std::string s, std::mt19937& rng) {
  static const std::string alphabet = "{}%#-+()[]'\"|.,:~*/=<>!\n abc0123456789_\\";
  int edits = std::uniform_int_distribution<int>(1, 8)(rng);
  for (int i = 0; i < edits && !s.empty(); ++i) {
    size_t at = std::uniform_int_distribution<size_t>(0, s.size() - 1)(rng);
    char c = alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
    switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
      case 0:
        s.erase(at, 1);
        break;
      case 1:
        s.insert(at, 1, c);
        break;
      case 2:
        s[at] = c;
        break;
      default:
        s.insert(at, s.substr(at, std::min<size_t>(40, s.size() - at)));
        break;  // repeat a span
    }
  }
  return s;
}

TEST(JinjaMutation, MutatedRealTemplatesRenderOrFailCleanly) {
  auto templates = corpus();
  ASSERT_GT(templates.size(), 20u);
  nlohmann::ordered_json context = {
      {"messages",
       {{{"role", "system"}, {"content", "s"}},
        {{"role", "user"}, {"content", "u 😀"}},
        {{"role", "assistant"},
         {"content", "<think>r</think>a"},
         {"tool_calls",
          {{{"id", "1"},
            {"type", "function"},
            {"function", {{"name", "f"}, {"arguments", {{"x", 1}}}}}}}}},
        {{"role", "tool"}, {"content", "t"}},
        {{"role", "user"}, {"content", "again"}}}},
      {"tools",
       {{{"type", "function"},
         {"function", {{"name", "f"}, {"parameters", {{"type", "object"}}}}}}}},
      {"add_generation_prompt", true},
      {"bos_token", "<s>"},
      {"eos_token", "</s>"}};
  ps::jinja::Limits limits;
  limits.max_output_bytes = 64 << 10;
  limits.max_loop_iterations = 20000;
  limits.max_call_depth = 16;
  std::mt19937 rng(20261201);
  int rendered = 0, failed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string source = mutate(templates[i % templates.size()], rng);
    try {
      ps::jinja::Template::parse(source).render(context, limits);
      ++rendered;
    } catch (const ps::jinja::TemplateError&) {
      ++failed;
    } catch (const std::exception& e) {
      FAIL() << "not a TemplateError: " << e.what() << "\n" << source;
    }
  }
  // Both outcomes must occur, or the mutations are too weak (or too strong) to test anything.
  EXPECT_GT(rendered, 100);
  EXPECT_GT(failed, 100);
}

}  // namespace
