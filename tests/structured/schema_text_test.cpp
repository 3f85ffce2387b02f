#include <gtest/gtest.h>

#include "structured/constraint_spec.h"
#include "structured/json_schema_to_gbnf.h"

namespace ps {
namespace {

TEST(SchemaTextTest, Smoke) {
  std::string g = json_schema_to_gbnf_text(
      R"({"type":"object","properties":{"b":{"type":"integer","minimum":3,"maximum":120},"a":{"type":"string","maxLength":4}},"required":["b"]})");
  std::cout << g;
  std::cout << regex_to_gbnf("^[a-z]+\\d{2,3}(x|yz)?$");
  std::cout << json_schema_to_gbnf_text(R"({"type":"string","pattern":"a\"b"})");
  std::cout << json_object_gbnf();
}

}  // namespace
}  // namespace ps
