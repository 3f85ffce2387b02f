// Every construct of the Jinja engine against Python's Jinja2: tests/chat/jinja_cases.json
// holds small templates with the output Jinja2 gives under transformers' settings (written by
// tests/tools/make_jinja_cases.py), or the fact that Jinja2 raises.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chat/jinja_template.h"

namespace {

using Json = nlohmann::ordered_json;

std::vector<Json> load_cases() {
  std::ifstream in(std::string(PAGEDSERVE_SOURCE_DIR) + "/tests/chat/jinja_cases.json");
  std::stringstream s;
  s << in.rdbuf();
  std::vector<Json> cases;
  for (auto& c : Json::parse(s.str())) cases.push_back(c);
  return cases;
}

class JinjaCase : public testing::TestWithParam<Json> {};

TEST_P(JinjaCase, RendersLikeJinja2) {
  const Json& c = GetParam();
  const std::string source = c["template"].get<std::string>();
  SCOPED_TRACE("template: " + source);
  if (c.contains("raises")) {
    EXPECT_THROW(
        {
          auto tpl = ps::jinja::Template::parse(source);
          tpl.render(c["context"]);
        },
        ps::jinja::TemplateError)
        << "Jinja2 raises " << c["raises"].get<std::string>();
    return;
  }
  std::string out;
  try {
    out = ps::jinja::Template::parse(source).render(c["context"]);
  } catch (const ps::jinja::TemplateError& e) {
    FAIL() << "raised: " << e.what();
  }
  EXPECT_EQ(out, c["expected"].get<std::string>());
}

INSTANTIATE_TEST_SUITE_P(Jinja2Reference, JinjaCase, testing::ValuesIn(load_cases()),
                         [](const testing::TestParamInfo<Json>& info) {
                           return info.param["name"].get<std::string>();
                         });

}  // namespace
