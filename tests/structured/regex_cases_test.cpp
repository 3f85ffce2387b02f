// GBNF constructs against Python's `re` on the same language: regex_cases.json (written by
// make_regex_cases.py) holds strings and re.fullmatch's verdict for each; the matcher must agree,
// and every prefix of a matching string must be accepted as a prefix.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "test_vocab.h"

namespace ps {
namespace {

TEST(RegexCases, AgreeWithPythonRe) {
  std::ifstream in(std::string(PAGEDSERVE_SOURCE_DIR) + "/tests/structured/regex_cases.json");
  ASSERT_TRUE(in) << "regex_cases.json missing";
  nlohmann::json cases = nlohmann::json::parse(in);
  ASSERT_GE(cases.size(), 10u);
  size_t checked = 0, matched = 0;
  for (const auto& c : cases) {
    auto g = test::compile_gbnf(c["gbnf"].get<std::string>());
    for (const auto& row : c["strings"]) {
      std::string text = row["text"];
      bool want = row["match"];
      EXPECT_EQ(test::matches(g, text), want)
          << c["gbnf"].get<std::string>() << " vs /" << c["regex"].get<std::string>() << "/ on '"
          << text << "'";
      if (want) {
        ++matched;
        for (size_t i = 0; i <= text.size(); ++i) {
          EXPECT_TRUE(test::is_prefix(g, text.substr(0, i))) << text << " prefix " << i;
        }
      }
      ++checked;
    }
  }
  EXPECT_GT(matched, checked / 10);  // both verdicts are well represented
}

}  // namespace
}  // namespace ps
