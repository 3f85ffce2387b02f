// json_schema_to_gbnf and friends, checked through the real matcher: per keyword, texts that
// must be accepted and texts that must be rejected (the corpus test checks the same against
// python3-jsonschema at scale: tests/e2e/structured_schema_corpus.sh).
#include <gtest/gtest.h>

#include <sstream>

#include "structured/constraint_spec.h"
#include "structured/json_schema_to_gbnf.h"
#include "test_vocab.h"

namespace ps {
namespace {

using test::compile_gbnf;
using test::matches;

std::shared_ptr<const CompiledGrammar> schema(const std::string& text) {
  return compile_gbnf(json_schema_to_gbnf_text(text));
}

// The StructuredError message for a schema that must be refused ("" if it compiled).
std::string refusal(const std::string& text) {
  try {
    json_schema_to_gbnf_text(text);
  } catch (const StructuredError& e) {
    return e.what();
  }
  return "";
}

TEST(SchemaObjects, MembersInSchemaOrderWithOptionalOnes) {
  auto g = schema(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},
                      "c":{"type":"integer"}},"required":["b"]})");
  for (const char* ok : {R"({"b": 1})", R"({"a": 1, "b": 2})", R"({"b": 1, "c": 2})",
                         R"({"a": 1, "b": 1, "c": 1})"}) {
    EXPECT_TRUE(matches(g, ok)) << ok;
  }
  for (const char* bad : {"{}", R"({"a": 1})", R"({"b": 1, "a": 1})", R"({"b":1})", R"({"b": 1, })",
                          R"({ "b": 1})", R"({"b": 1, "d": 1})", R"({"b": "1"})"}) {
    EXPECT_FALSE(matches(g, bad)) << bad;
  }
}

TEST(SchemaObjects, AllOptionalAllowsEmpty) {
  auto g = schema(R"({"properties":{"x":{"type":"boolean"},"y":{"type":"null"}}})");
  EXPECT_TRUE(matches(g, "{}"));
  EXPECT_TRUE(matches(g, R"({"y": null})"));
  EXPECT_TRUE(matches(g, R"({"x": true, "y": null})"));
  EXPECT_FALSE(matches(g, R"({"x": null})"));
}

TEST(SchemaObjects, TextOverloadKeepsPropertyOrder) {
  const char* text =
      R"({"type":"object","properties":{"z":{"type":"integer"},"a":{"type":"integer"}},
                         "required":["z","a"]})";
  EXPECT_TRUE(matches(schema(text), R"({"z": 1, "a": 2})"));
  // nlohmann::json sorts keys: that overload gives the sorted order.
  auto sorted = compile_gbnf(json_schema_to_gbnf(nlohmann::json::parse(text)));
  EXPECT_TRUE(matches(sorted, R"({"a": 2, "z": 1})"));
}

TEST(SchemaObjects, AdditionalPropertiesTrueNeverRepeatsADefinedKey) {
  auto g = schema(R"({"type":"object","properties":{"a":{"type":"integer"},"ab":{"type":"integer"}},
                      "additionalProperties":true})");
  EXPECT_TRUE(matches(g, R"({"a": 1, "x": [1, {"y": null}]})"));
  EXPECT_TRUE(matches(g, R"({"abc": 1, "b": "s", "": 2})"));
  EXPECT_TRUE(matches(g, "{}"));
  EXPECT_FALSE(matches(g, R"({"a": 1, "a": 2})"));
  EXPECT_FALSE(matches(g, R"({"ab": 1, "ab": 2})"));
  EXPECT_FALSE(matches(g, R"({"x": 1, "a": 2})"));  // defined members come first
}

TEST(SchemaObjects, AdditionalPropertiesSchemaAndDefaultClosed) {
  auto g = schema(R"({"type":"object","additionalProperties":{"type":"integer","maximum":5}})");
  EXPECT_TRUE(matches(g, R"({"k": 5, "\u00e9": 0})"));
  EXPECT_FALSE(matches(g, R"({"k": 6})"));
  // Absent additionalProperties: no other members are generated.
  auto closed = schema(R"({"type":"object","properties":{"a":{"type":"integer"}}})");
  EXPECT_FALSE(matches(closed, R"({"a": 1, "b": 2})"));
}

// propertyNames {"type": "string"} (or true, or {}) holds of every object: accepted as it is;
// any other propertyNames is refused (SchemaErrors below).
TEST(SchemaObjects, PropertyNamesThatAreAnyStringAreAccepted) {
  for (const char* names :
       {R"({"type":"string"})", "true", "{}", R"({"type":"string","description":"k"})"}) {
    auto g = schema(
        std::string(
            R"({"type":"object","additionalProperties":{"type":"integer"},"propertyNames":)") +
        names + "}");
    EXPECT_TRUE(matches(g, R"({"k": 5, "other": 1})")) << names;
    EXPECT_FALSE(matches(g, R"({"k": "x"})")) << names;
  }
}

TEST(SchemaObjects, RequiredButUndefinedMemberTakesAnyValue) {
  auto g =
      schema(R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a","x"]})");
  EXPECT_TRUE(matches(g, R"({"a": 1, "x": {"deep": [true]}})"));
  EXPECT_FALSE(matches(g, R"({"a": 1})"));
  EXPECT_NE(refusal(R"({"properties":{"a":{}},"required":["x"],"additionalProperties":false})"),
            "");
}

TEST(SchemaObjects, EscapedAndUnicodeKeys) {
  auto g = schema(
      R"({"type":"object","properties":{"q\"k":{"type":"integer"},"caf\u00e9":{"type":"integer"}}})");
  EXPECT_TRUE(matches(g, "{\"q\\\"k\": 1, \"caf\xC3\xA9\": 2}"));
  EXPECT_FALSE(matches(g, R"({"q"k": 1})"));
}

TEST(SchemaArrays, BoundsAndItems) {
  auto g = schema(R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})");
  EXPECT_TRUE(matches(g, "[1, 2]"));
  EXPECT_TRUE(matches(g, "[1, 2, 3]"));
  for (const char* bad : {"[]", "[1]", "[1, 2, 3, 4]", "[1,2]", "[1, \"2\"]", "[1, 2, ]"}) {
    EXPECT_FALSE(matches(g, bad)) << bad;
  }
  auto any = schema(R"({"type":"array"})");
  EXPECT_TRUE(matches(any, "[]"));
  EXPECT_TRUE(matches(any, R"([1, "a", null, [], {}])"));
}

TEST(SchemaArrays, PrefixItemsAndTupleForms) {
  auto closed = schema(R"({"prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})");
  EXPECT_TRUE(matches(closed, R"(["a", 1])"));
  EXPECT_TRUE(matches(closed, R"(["a"])"));
  EXPECT_TRUE(matches(closed, "[]"));
  EXPECT_FALSE(matches(closed, R"(["a", 1, 2])"));
  EXPECT_FALSE(matches(closed, R"([1])"));
  auto rest = schema(
      R"({"prefixItems":[{"const":"h"}],"items":{"type":"boolean"},"minItems":2,"maxItems":3})");
  EXPECT_TRUE(matches(rest, R"(["h", true])"));
  EXPECT_TRUE(matches(rest, R"(["h", true, false])"));
  EXPECT_FALSE(matches(rest, R"(["h"])"));
  EXPECT_FALSE(matches(rest, R"(["h", true, false, true])"));
  auto draft7 = schema(R"({"items":[{"type":"null"}],"additionalItems":{"type":"integer"}})");
  EXPECT_TRUE(matches(draft7, "[null, 1, 2]"));
  EXPECT_FALSE(matches(draft7, "[1]"));
  EXPECT_NE(refusal(R"({"prefixItems":[{},{}],"items":false,"minItems":3})"), "");
}

TEST(SchemaStrings, LengthCountsCharactersNotBytes) {
  auto g = schema(R"({"type":"string","minLength":2,"maxLength":2})");
  EXPECT_TRUE(matches(g, R"("ab")"));
  EXPECT_TRUE(matches(g, R"("\n\"")"));                 // two escapes, two characters
  EXPECT_TRUE(matches(g, "\"\xC3\xA9\xE4\xB8\xAD\""));  // two multi-byte characters
  EXPECT_TRUE(matches(g, R"("\u00e9x")"));
  EXPECT_FALSE(matches(g, R"("abc")"));
  EXPECT_FALSE(matches(g, R"("a")"));
  EXPECT_FALSE(matches(g, "\"a\nb\""));  // a raw control character is not JSON
}

TEST(SchemaStrings, NoSurrogateEscapes) {
  auto g = schema(R"({"type":"string"})");
  EXPECT_TRUE(matches(g, R"("\uD7FF\uE000")"));
  EXPECT_FALSE(matches(g, R"("\uD83D\uDE00")"));
  EXPECT_FALSE(matches(g, R"("\x41")"));
}

TEST(SchemaStrings, PatternIsASearchInsideTheJsonString) {
  auto g = schema(R"({"type":"string","pattern":"b+c"})");
  EXPECT_TRUE(matches(g, R"("abbcd")"));
  EXPECT_TRUE(matches(g, R"("bc")"));
  EXPECT_FALSE(matches(g, R"("ac")"));
  auto anchored = schema(R"({"type":"string","pattern":"^a\"\\\\$"})");  // a " backslash
  EXPECT_TRUE(matches(anchored, R"("a\"\\")"));
  EXPECT_FALSE(matches(anchored, R"("a\"\\x")"));
}

TEST(SchemaFormats, EachFormatAcceptsAndRejects) {
  struct Case {
    const char* format;
    std::vector<const char*> ok, bad;
  };
  std::vector<Case> cases = {
      {"date",
       {"2024-02-28", "1999-12-31", "2023-04-30"},
       {"2024-02-30", "2024-13-01", "24-01-01", "2024-04-31"}},
      {"time", {"23:59:59Z", "00:00:00.123+05:30"}, {"24:00:00Z", "12:00:00", "12:60:00Z"}},
      {"date-time", {"2024-01-02T03:04:05Z"}, {"2024-01-02 03:04:05Z", "2024-01-02T03:04:05"}},
      {"uuid", {"123e4567-e89b-12d3-a456-426614174000"}, {"123e4567e89b12d3a456426614174000"}},
      {"email", {"a.b+c@ex-ample.co.uk"}, {"a@b", "@b.com", "a..b@c.com"}},
      {"ipv4", {"192.168.0.255", "0.0.0.0"}, {"256.1.1.1", "01.1.1.1", "1.1.1"}},
      {"uri",
       {"https://example.com/a?b=c#d", "urn:isbn:0451450523", "http://[::1]:80/%7Euser"},
       {"example.com", "://x", "http://a b", "1http://x", "http:", "http://x/%G1"}},
  };
  for (const auto& c : cases) {
    auto g = schema(std::string(R"({"type":"string","format":")") + c.format + "\"}");
    for (const char* s : c.ok)
      EXPECT_TRUE(matches(g, std::string("\"") + s + "\"")) << c.format << " " << s;
    for (const char* s : c.bad)
      EXPECT_FALSE(matches(g, std::string("\"") + s + "\"")) << c.format << " " << s;
  }
  EXPECT_NE(refusal(R"({"type":"string","format":"ipv6"})").find("'ipv6'"), std::string::npos);
}

TEST(SchemaIntegers, RangesMatchExactlyTheirIntegers) {
  struct Range {
    std::optional<int64_t> lo, hi;
  };
  std::vector<Range> ranges = {
      {0, 100},           {-50, -7},          {-15, 260}, {1000, std::nullopt},
      {std::nullopt, -3}, {42, 42},           {7, 1234},  {-1005, 99},
      {std::nullopt, 57}, {-3, std::nullopt}, {0, 0},     {10, 19}};
  for (const auto& r : ranges) {
    std::string s = R"({"type":"integer")";
    if (r.lo) s += ",\"minimum\":" + std::to_string(*r.lo);
    if (r.hi) s += ",\"maximum\":" + std::to_string(*r.hi);
    auto g = schema(s + "}");
    for (int64_t n = -1300; n <= 1300; ++n) {
      bool in = (!r.lo || n >= *r.lo) && (!r.hi || n <= *r.hi);
      ASSERT_EQ(matches(g, std::to_string(n)), in) << s << " n=" << n;
    }
    EXPECT_EQ(matches(g, "123456789012"), !r.hi) << s;
    EXPECT_EQ(matches(g, "-123456789012"), !r.lo) << s;
    EXPECT_FALSE(matches(g, "-0")) << s;
    EXPECT_FALSE(matches(g, "01")) << s;
    EXPECT_FALSE(matches(g, "1.0")) << s;
  }
}

TEST(SchemaIntegers, ExclusiveAndFractionalBounds) {
  auto g = schema(R"({"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":3})");
  EXPECT_TRUE(matches(g, "1"));
  EXPECT_TRUE(matches(g, "2"));
  EXPECT_FALSE(matches(g, "0"));
  EXPECT_FALSE(matches(g, "3"));
  auto d4 = schema(R"({"type":"integer","minimum":5,"exclusiveMinimum":true,"maximum":7})");
  EXPECT_FALSE(matches(d4, "5"));
  EXPECT_TRUE(matches(d4, "6"));
  EXPECT_TRUE(matches(d4, "7"));
  auto frac = schema(R"({"type":"integer","minimum":2.5,"maximum":4.5})");
  EXPECT_FALSE(matches(frac, "2"));
  EXPECT_TRUE(matches(frac, "3"));
  EXPECT_TRUE(matches(frac, "4"));
  EXPECT_FALSE(matches(frac, "5"));
  EXPECT_NE(refusal(R"({"type":"integer","minimum":5,"maximum":4})"), "");
}

TEST(SchemaNumbers, IntegerValuedBoundsOnNumbers) {
  struct Bounds {
    const char* keywords;
    double lo, hi;  // the interval, +-1e9 for none
    bool lo_open, hi_open;
  };
  std::vector<Bounds> cases = {
      {R"("minimum":0)", 0, 1e9, false, false},
      {R"("exclusiveMinimum":0)", 0, 1e9, true, false},
      {R"("maximum":3)", -1e9, 3, false, false},
      {R"("minimum":-2,"exclusiveMaximum":5)", -2, 5, false, true},
      {R"("exclusiveMinimum":-3,"maximum":-1)", -3, -1, true, false},
      {R"("minimum":-4,"maximum":0)", -4, 0, false, false},
      {R"("exclusiveMaximum":0)", -1e9, 0, false, true},
      {R"("minimum":2,"maximum":2)", 2, 2, false, false},
      {R"("minimum":1,"exclusiveMinimum":true,"maximum":12)", 1, 12, true, false},
  };
  for (const auto& c : cases) {
    auto g = schema(std::string(R"({"type":"number",)") + c.keywords + "}");
    for (int q = -80; q <= 80; ++q) {
      double x = q / 4.0;
      bool in = (c.lo_open ? x > c.lo : x >= c.lo) && (c.hi_open ? x < c.hi : x <= c.hi);
      std::ostringstream text;
      text << x;
      std::string t = text.str();
      ASSERT_EQ(matches(g, t), in) << c.keywords << " x=" << t;
      if (q % 4 == 0) {
        EXPECT_EQ(matches(g, t + ".00"), in) << c.keywords << " x=" << t << ".00";
      }
    }
    EXPECT_FALSE(matches(g, "1e2")) << c.keywords;
    EXPECT_FALSE(matches(g, "01.5")) << c.keywords;
  }
  EXPECT_NE(refusal(R"({"type":"number","minimum":3,"maximum":2})"), "");
  EXPECT_NE(refusal(R"({"type":"number","exclusiveMinimum":2,"exclusiveMaximum":2})"), "");
}

TEST(SchemaValues, EnumConstAndTypeUnions) {
  auto e = schema(R"({"enum":["a",1,null,{"k":[1,2]}]})");
  EXPECT_TRUE(matches(e, R"("a")"));
  EXPECT_TRUE(matches(e, "null"));
  EXPECT_TRUE(matches(e, R"({"k": [1, 2]})"));
  EXPECT_FALSE(matches(e, R"({"k":[1,2]})"));
  EXPECT_FALSE(matches(e, "2"));
  auto filtered = schema(R"({"type":"string","enum":["x",3]})");
  EXPECT_FALSE(matches(filtered, "3"));
  auto u = schema(R"({"type":["string","null"],"maxLength":1})");
  EXPECT_TRUE(matches(u, "null"));
  EXPECT_TRUE(matches(u, R"("x")"));
  EXPECT_FALSE(matches(u, R"("xy")"));
  EXPECT_FALSE(matches(u, "1"));
  auto nullable = schema(R"({"type":"integer","nullable":true})");
  EXPECT_TRUE(matches(nullable, "null"));
  EXPECT_TRUE(matches(nullable, "-4"));
  auto number = schema(R"({"type":"number"})");
  for (const char* ok : {"0", "-1.5", "3e10", "2.5E-3"}) EXPECT_TRUE(matches(number, ok)) << ok;
  for (const char* bad : {"01", ".5", "1.", "+1", "1e", "NaN"})
    EXPECT_FALSE(matches(number, bad)) << bad;
}

TEST(SchemaCombinators, AnyOfOneOfAllOf) {
  auto any = schema(R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]})");
  EXPECT_TRUE(matches(any, "12"));
  EXPECT_TRUE(matches(any, R"("a")"));
  EXPECT_FALSE(matches(any, R"("ab")"));
  auto one = schema(
      R"({"oneOf":[{"type":"object","properties":{"k":{"const":"a"},"x":{"type":"integer"}},"required":["k"]},
                                  {"type":"object","properties":{"k":{"const":"b"}},"required":["k"]}]})");
  EXPECT_TRUE(matches(one, R"({"k": "a", "x": 1})"));
  EXPECT_TRUE(matches(one, R"({"k": "b"})"));
  EXPECT_FALSE(matches(one, R"({"k": "c"})"));
  auto all =
      schema(R"({"allOf":[{"properties":{"a":{"type":"integer","minimum":0}},"required":["a"]},
                                  {"properties":{"a":{"maximum":3},"b":{"type":"boolean"}}}]})");
  EXPECT_TRUE(matches(all, R"({"a": 3, "b": true})"));
  EXPECT_TRUE(matches(all, R"({"a": 0})"));
  EXPECT_FALSE(matches(all, R"({"a": 4})"));
  EXPECT_FALSE(matches(all, R"({"b": true})"));
  // A closed branch drops the other branch's extra member.
  auto closed =
      schema(R"({"allOf":[{"properties":{"a":{"type":"integer"}},"additionalProperties":false},
                                     {"properties":{"b":{"type":"integer"}}}]})");
  EXPECT_FALSE(matches(closed, R"({"a": 1, "b": 2})"));
  EXPECT_TRUE(matches(closed, R"({"a": 1})"));
  std::string overlap = refusal(R"({"oneOf":[{"type":"integer"},{"type":"number"}]})");
  EXPECT_NE(overlap.find("oneOf"), std::string::npos) << overlap;
}

TEST(SchemaRefs, DefsDefinitionsAndRecursion) {
  auto tree = schema(R"({"$defs":{"n":{"type":"object","properties":{"v":{"type":"integer"},
      "kids":{"type":"array","items":{"$ref":"#/$defs/n"}}},"required":["v"]}},"$ref":"#/$defs/n"})");
  EXPECT_TRUE(matches(tree, R"({"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}, {"v": 4}]})"));
  EXPECT_FALSE(matches(tree, R"({"v": 1, "kids": [{"kids": []}]})"));
  auto root =
      schema(R"({"type":"object","properties":{"next":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},
                         "required":["next"]})");
  EXPECT_TRUE(matches(root, R"({"next": {"next": null}})"));
  auto old = schema(
      R"({"definitions":{"s":{"type":"string","maxLength":1}},"items":{"$ref":"#/definitions/s"}})");
  EXPECT_TRUE(matches(old, R"(["a", "b"])"));
  EXPECT_FALSE(matches(old, R"(["ab"])"));
}

TEST(SchemaErrors, UnsupportedKeywordsNameKeywordAndPointer) {
  struct Case {
    const char* schema;
    const char* must_mention;
  };
  std::vector<Case> cases = {
      {R"({"type":"array","uniqueItems":true})", "uniqueItems"},
      {R"({"type":"integer","multipleOf":3})", "multipleOf"},
      {R"({"properties":{"a":{"not":{"type":"null"}}}})", "/properties/a/not"},
      {R"({"if":{},"then":{}})", "'if'"},
      {R"({"type":"object","patternProperties":{"^x":{}}})", "patternProperties"},
      {R"({"type":"object","minProperties":1})", "minProperties"},
      {R"({"type":"object","propertyNames":{"maxLength":3}})", "propertyNames"},
      {R"({"type":"object","propertyNames":{"type":"string","pattern":"^a"}})", "propertyNames"},
      {R"({"type":"object","propertyNames":false})", "propertyNames"},
      {R"({"type":"object","dependentRequired":{"a":["b"]}})", "dependentRequired"},
      {R"({"type":"object","unevaluatedProperties":false})", "unevaluatedProperties"},
      {R"({"type":"array","contains":{"type":"integer"}})", "contains"},
      {R"({"items":{"type":"number","minimum":0.5}})", "/items/minimum"},
      {R"({"$ref":"https://example.com/s.json"})", "local references"},
      {R"({"$ref":"#/$defs/missing"})", "points at nothing"},
      {R"({"type":"string","pattern":"^a","maxLength":3})", "pattern"},
      {R"j({"type":"string","pattern":"a(?=b)"})j", "lookaround"},
      {R"({"type":"string","pattern":"(a)\\1"})", "backreference"},
      {R"({"type":"string","pattern":"\\bword"})", "word boundaries"},
      {R"({"type":"string","pattern":"(?i)abc"})", "flags"},
      {R"({"type":"string","pattern":"a++"})", "possessive"},
      {R"({"type":"string","pattern":"\\p{L}"})", "\\p"},
      {R"({"type":"string","pattern":"(ab"})", "missing ')'"},
      {R"({"type":"bogus"})", "unknown type"},
      {R"({"properties":{"a":false},"required":["a"]})", "false"},
      {R"({"oneOf":[{"type":"string"},{"type":"string","maxLength":2}]})", "oneOf"},
      {R"({"type":"string","format":"hostname"})", "hostname"},
      {R"({"allOf":[{"minLength":1},{"minLength":2}]})", "minLength"},
      {"{not json", "not valid JSON"},
  };
  for (const auto& c : cases) {
    std::string message = refusal(c.schema);
    EXPECT_NE(message.find(c.must_mention), std::string::npos)
        << c.schema << " gave: " << (message.empty() ? "(compiled)" : message);
  }
  // Annotations are fine.
  EXPECT_EQ(refusal(R"({"title":"t","description":"d","examples":[1],"default":1,"$comment":"c",
                        "$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x",
                        "type":"integer","deprecated":false})"),
            "");
}

TEST(SchemaGrammarText, EveryRuleCarriesThePrefix) {
  std::string g = json_schema_to_gbnf_text(
      R"({"$defs":{"p":{"type":"object","properties":{"x":{"type":"integer"}}}},
          "type":"object","properties":{"a":{"$ref":"#/$defs/p"},"b":{"type":"string"},
          "c":{}},"additionalProperties":true})",
      "tool-f");
  std::istringstream lines(g);
  std::string line;
  int rules = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    ++rules;
    std::string name = line.substr(0, line.find(" ::= "));
    EXPECT_TRUE(name == "tool-f" || name.rfind("tool-f-", 0) == 0) << line;
  }
  EXPECT_GT(rules, 3);
  // Spliced under another rule, it still compiles and matches.
  auto spliced = compile_gbnf("root ::= \"<call>\" tool-f \"</call>\"\n" + g);
  EXPECT_TRUE(matches(spliced, R"(<call>{"a": {"x": 1}, "b": "s", "c": 2, "z": [null]}</call>)"));
}

TEST(JsonObjectRegexChoice, Grammars) {
  auto obj = compile_gbnf(json_object_gbnf());
  EXPECT_TRUE(matches(obj, "{}"));
  EXPECT_TRUE(matches(obj, R"({"a": [1, {"b": null}], "a": "dup"})"));
  EXPECT_FALSE(matches(obj, "[]"));
  EXPECT_FALSE(matches(obj, R"("x")"));
  auto choice = compile_gbnf(choice_gbnf({"yes", "no", "caf\xC3\xA9", "a\"b"}));
  for (const char* ok : {"yes", "no", "caf\xC3\xA9", "a\"b"})
    EXPECT_TRUE(matches(choice, ok)) << ok;
  EXPECT_FALSE(matches(choice, "ye"));
  EXPECT_FALSE(matches(choice, "yesno"));
  EXPECT_THROW(choice_gbnf({}), StructuredError);
  auto re = compile_gbnf(regex_to_gbnf("^[A-Z]\\w{2}(-\\d+)?$"));
  EXPECT_TRUE(matches(re, "Ab_"));
  EXPECT_TRUE(matches(re, "Xyz-42"));
  EXPECT_FALSE(matches(re, "xyz"));
  EXPECT_FALSE(matches(re, "Xyz-"));
  EXPECT_THROW(regex_to_gbnf("a(?<=b)"), StructuredError);
  EXPECT_THROW(regex_to_gbnf("a^b"), StructuredError);
}

}  // namespace
}  // namespace ps
