// Every error a template can cause names its line and column and says what went wrong; limits
// stop hostile templates instead of letting them hang or eat memory.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chat/jinja_template.h"

namespace {

using ps::jinja::Limits;
using ps::jinja::Template;
using ps::jinja::TemplateError;

// The error parse() or render() throws, as what() gives it.
std::string error_of(const std::string& source,
                     const nlohmann::ordered_json& context = nlohmann::ordered_json::object(),
                     const Limits& limits = {}) {
  try {
    Template::parse(source).render(context, limits);
  } catch (const TemplateError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JinjaErrors, UnknownFilterIsAParseError) {
  EXPECT_EQ(error_of("{{ x | nope }}"), "line 1, column 8: No filter named 'nope'.");
  // Even in a branch that would never run: Jinja2 checks filters when it compiles.
  EXPECT_EQ(error_of("{% if false %}\n  {{ x|shout }}\n{% endif %}"),
            "line 2, column 8: No filter named 'shout'.");
}

TEST(JinjaErrors, UnknownTestIsAParseError) {
  EXPECT_EQ(error_of("{{ x is prime }}"), "line 1, column 6: No test named 'prime'.");
}

TEST(JinjaErrors, BadSyntaxNamesLineAndColumn) {
  EXPECT_EQ(error_of("{% if %}"), "line 1, column 7: unexpected '%}'");
  EXPECT_EQ(error_of("line one\n{{ 1 + }}"), "line 2, column 8: unexpected '}}'");
  EXPECT_EQ(error_of("{{ 'unterminated }}"), "line 1, column 4: unexpected end of string");
  EXPECT_EQ(error_of("{{ a b }}"), "line 1, column 6: expected '}}', got 'b'");
  EXPECT_EQ(error_of("{{ x ]] }}"), "line 1, column 6: unexpected ']'");
  EXPECT_EQ(error_of("{{ x @ y }}"), "line 1, column 6: unexpected char '@'");
}

TEST(JinjaErrors, UnclosedBlocksAndTags) {
  EXPECT_EQ(error_of("{% if true %}x"),
            "line 1, column 15: unexpected end of template, expected 'elif' or 'else' or 'endif'");
  EXPECT_EQ(error_of("{% for x in y %}"),
            "line 1, column 17: unexpected end of template, expected 'else' or 'endfor'");
  EXPECT_EQ(error_of("{{ x "), "line 1, column 1: unexpected end of template, expected '}}'");
  EXPECT_EQ(error_of("a {# never closed"), "line 1, column 3: Missing end of comment tag");
  EXPECT_EQ(error_of("{% endif %}"), "line 1, column 4: unknown tag 'endif'");
}

TEST(JinjaErrors, UnknownAndUnsupportedTags) {
  EXPECT_EQ(error_of("{% frobnicate %}"), "line 1, column 4: unknown tag 'frobnicate'");
  EXPECT_EQ(error_of("{% include 'x.jinja' %}"),
            "line 1, column 4: the 'include' tag is not supported in chat templates");
  EXPECT_EQ(error_of("{% break %}"), "line 1, column 4: 'break' outside of a for loop");
}

TEST(JinjaErrors, CallingUndefinedNamesIt) {
  EXPECT_EQ(error_of("\n  {{ tool_parser(tools) }}"),
            "line 2, column 17: 'tool_parser' is undefined");
  EXPECT_EQ(error_of("{{ messages[0].content.nope() }}", {{"messages", {{{"content", "x"}}}}}),
            "line 1, column 28: 'str object' has no attribute 'nope'");
  EXPECT_EQ(error_of("{{ 'x'() }}"), "line 1, column 7: 'str' object is not callable");
}

TEST(JinjaErrors, UndefinedUsesThatJinja2Rejects) {
  EXPECT_EQ(error_of("{{ user.name }}"), "line 1, column 8: 'user' is undefined");
  EXPECT_EQ(error_of("{{ m.a.b }}", {{"m", nlohmann::ordered_json::object()}}),
            "line 1, column 7: 'dict object' has no attribute 'a'");
  EXPECT_EQ(error_of("{{ n + 1 }}"), "line 1, column 6: 'n' is undefined");
  EXPECT_EQ(error_of("{{ x|tojson }}"),
            "line 1, column 6: Object of type Undefined is not JSON serializable");
}

TEST(JinjaErrors, TypeErrorsSayWhich) {
  EXPECT_EQ(error_of("{{ 'a' + 1 }}"),
            "line 1, column 8: can only concatenate str (not \"int\") to str");
  EXPECT_EQ(error_of("{{ 1 / 0 }}"), "line 1, column 6: division by zero");
  EXPECT_EQ(error_of("{% for x in 3 %}{% endfor %}"),
            "line 1, column 4: 'int' object is not iterable");
  EXPECT_EQ(error_of("{% set d = {} %}{% set d.x = 1 %}"),
            "line 1, column 20: cannot assign attribute on non-namespace object");
  EXPECT_EQ(error_of("{% set xs = [] %}{{ xs.append(1) }}"),
            "line 1, column 30: access to attribute 'append' of 'list' object is unsafe.");
}

TEST(JinjaErrors, RaiseExceptionKeepsTheTemplatesMessage) {
  try {
    Template::parse(
        "{% if messages|length == 0 %}\n{{ raise_exception('No messages provided.') }}{% endif %}")
        .render(nlohmann::ordered_json{{"messages", nlohmann::ordered_json::array()}});
    FAIL() << "no error";
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.message(), "No messages provided.");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(std::string(e.what()), "line 2, column 19: No messages provided.");
  }
}

TEST(JinjaLimits, LoopLimitStopsNestedLoops) {
  Limits limits;
  limits.max_loop_iterations = 1000;
  EXPECT_EQ(error_of("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}",
                     nlohmann::ordered_json::object(), limits),
            "line 1, column 43: loop limit exceeded: more than 1000 loop iterations");
  // A huge range() fails at the limit, before it allocates a billion items.
  EXPECT_EQ(error_of("{{ range(1000000000)|length }}", nlohmann::ordered_json::object(), limits),
            "line 1, column 9: loop limit exceeded: more than 1000 loop iterations");
}

TEST(JinjaLimits, LoopLimitIsCheckedBeforeALongStringIsSplitIntoItems) {
  Limits limits;
  limits.max_loop_iterations = 1000;
  nlohmann::ordered_json ctx = {{"s", std::string(5000, 'x')}, {"csv", std::string(5000, ',')}};
  EXPECT_EQ(error_of("{% for c in s %}{% endfor %}", ctx, limits),
            "line 1, column 4: loop limit exceeded: more than 1000 loop iterations");
  EXPECT_EQ(error_of("{{ csv.split(',')|length }}", ctx, limits),
            "line 1, column 13: loop limit exceeded: more than 1000 loop iterations");
  EXPECT_EQ(error_of("{{ s|list|length }}", {{"s", std::string(2u << 20, 'x')}}),
            "line 1, column 6: string too long to iterate (over 1 MiB)");
}

TEST(JinjaLimits, OutputLimitStopsLongOutputAndHugeStrings) {
  Limits limits;
  limits.max_output_bytes = 1000;
  EXPECT_EQ(error_of("{% for i in range(200) %}0123456789{% endfor %}",
                     nlohmann::ordered_json::object(), limits),
            "line 1, column 26: output limit exceeded: the template produced more than 1000 bytes");
  // Doubling a string in a namespace never reaches the output but is caught all the same.
  EXPECT_EQ(error_of("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ "
                     "ns.s %}{% endfor %}",
                     nlohmann::ordered_json::object(), limits),
            "line 1, column 76: output limit exceeded: the template produced more than 1000 bytes");
  EXPECT_EQ(error_of("{{ 'x' * 1000000000000 }}", nlohmann::ordered_json::object(), limits),
            "line 1, column 8: output limit exceeded: the template produced more than 1000 bytes");
}

TEST(JinjaLimits, RecursionLimitStopsRunawayMacros) {
  Limits limits;
  limits.max_call_depth = 20;
  EXPECT_EQ(error_of("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}",
                     nlohmann::ordered_json::object(), limits),
            "line 1, column 21: recursion limit exceeded: macro calls nested deeper than 20");
}

TEST(JinjaLimits, DeepNestingIsAParseErrorNotAStackOverflow) {
  std::string deep = "{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}";
  EXPECT_NE(error_of(deep).find("template nested deeper than 100 levels"), std::string::npos);
  std::string ifs;
  for (int i = 0; i < 500; ++i) ifs += "{% if true %}";
  EXPECT_NE(error_of(ifs).find("template nested deeper than 100 levels"), std::string::npos);
}

TEST(JinjaLimits, ContextMustBeAnObject) {
  EXPECT_EQ(error_of("x", nlohmann::ordered_json::array()),
            "line 1, column 1: the render context must be a JSON object");
}

}  // namespace
