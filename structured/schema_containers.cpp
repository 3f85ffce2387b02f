// Objects and arrays: the two schema kinds whose grammar is more than one alternation.

#include <functional>
#include <map>

#include "structured/char_set.h"
#include "structured/schema_compiler.h"

namespace ps {
namespace {

std::string count_suffix(long lo, long hi /* -1: unbounded */) {
  if (lo == 0 && hi < 0) return "*";
  if (lo == 1 && hi < 0) return "+";
  if (lo == 0 && hi == 1) return "?";
  if (hi < 0) return "{" + std::to_string(lo) + ",}";
  if (lo == hi) return "{" + std::to_string(lo) + "}";
  return "{" + std::to_string(lo) + "," + std::to_string(hi) + "}";
}

long count_keyword(const SchemaJson& s, const char* key, const std::string& ptr) {
  const auto& v = s[key];
  if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 100000) {
    schema_error(child_ptr(ptr, key),
                 std::string("'") + key + "' must be an integer between 0 and 100000");
  }
  return static_cast<long>(v.get<long long>());
}

// JSON string characters a key may use unescaped: then its text is its value, which is what lets
// key_not_in() tell keys apart by their letters.
CharSet raw_key_chars() {
  CharSet s = CharSet::all().minus(CharSet::range(0, 0x1F));
  return s.minus(CharSet::single('"')).minus(CharSet::single('\\'));
}

struct TrieNode {
  bool terminal = false;
  std::map<uint32_t, TrieNode> children;
};

}  // namespace

// A JSON string (quotes included) whose value is none of `names`: the trie of the names, where
// each node may end (unless a name ends there), continue along a child, or leave the trie on any
// other character and then take anything.
std::string SchemaCompiler::key_not_in(const std::vector<std::string>& names,
                                       const std::string& ptr) {
  TrieNode root;
  CharSet raw = raw_key_chars();
  for (const auto& name : names) {
    TrieNode* node = &root;
    size_t pos = 0;
    bool writable = true;
    std::vector<uint32_t> cps;
    while (pos < name.size()) {
      uint32_t c = decode_utf8(name, pos);
      if (!raw.contains(c)) writable = false;
      cps.push_back(c);
    }
    if (!writable) continue;  // a raw key can never spell it
    for (uint32_t c : cps) node = &node->children[c];
    node->terminal = true;
  }
  const std::string quote = "\"\\\"\"";
  std::string free_tail = rules_.add(rule_hint(ptr) + "-free", "(" + raw.to_gbnf() + ")* " + quote);
  std::function<std::string(const TrieNode&)> emit = [&](const TrieNode& node) {
    std::vector<std::string> alts;
    if (!node.terminal) alts.push_back(quote);
    CharSet others = raw;
    for (const auto& [c, child] : node.children) {
      others = others.minus(CharSet::single(c));
      alts.push_back(gbnf_literal_code_point(c) + " " + emit(child));
    }
    if (!others.empty()) alts.push_back(others.to_gbnf() + " " + free_tail);
    std::string body;
    for (size_t i = 0; i < alts.size(); ++i) body += (i ? " | " : "") + alts[i];
    return rules_.add(rule_hint(ptr) + "-key", body);
  };
  return "(" + quote + " " + emit(root) + ")";
}

std::string SchemaCompiler::object_expr(const SchemaJson& s, const std::string& ptr) {
  struct Member {
    std::string name;
    std::string value_rule;
    bool required;
  };
  std::vector<Member> members;
  std::map<std::string, size_t> index;
  if (s.contains("properties")) {
    if (!s["properties"].is_object()) {
      schema_error(child_ptr(ptr, "properties"), "'properties' must be an object");
    }
    for (const auto& [name, sub] : s["properties"].items()) {
      index[name] = members.size();
      members.push_back({name, visit(sub, child_ptr(child_ptr(ptr, "properties"), name)), false});
    }
  }
  // Other members: absent additionalProperties generates none (still valid output, shorter).
  bool extras = false;
  std::string extra_value;
  if (s.contains("additionalProperties")) {
    const auto& ap = s["additionalProperties"];
    if (ap.is_boolean()) {
      extras = ap.get<bool>();
      if (extras) extra_value = visit(true, child_ptr(ptr, "additionalProperties"));
    } else {
      extras = true;
      extra_value = visit(ap, child_ptr(ptr, "additionalProperties"));
    }
  }
  if (s.contains("required")) {
    if (!s["required"].is_array()) {
      schema_error(child_ptr(ptr, "required"), "'required' must be an array of names");
    }
    for (const auto& r : s["required"]) {
      if (!r.is_string()) schema_error(child_ptr(ptr, "required"), "names must be strings");
      std::string name = r.get<std::string>();
      auto it = index.find(name);
      if (it != index.end()) {
        members[it->second].required = true;
        continue;
      }
      // Required but not in properties: the member's value is whatever additionalProperties
      // allows (anything when it is absent).
      if (s.contains("additionalProperties") && s["additionalProperties"] == false) {
        schema_error(child_ptr(ptr, "required"), "'" + name +
                                                     "' is required but additionalProperties "
                                                     "is false and it is not in properties");
      }
      std::string value = extras ? extra_value : visit(true, ptr);
      index[name] = members.size();
      members.push_back({name, value, true});
    }
  }
  std::vector<std::string> kv;
  std::vector<std::string> names;
  for (const auto& m : members) {
    kv.push_back(gbnf_literal(SchemaJson(m.name).dump() + ": ") + " " + m.value_rule);
    names.push_back(m.name);
  }
  std::string extra_kv;
  if (extras) {
    std::string key = members.empty() ? string_rule() : key_not_in(names, ptr);
    extra_kv = rules_.add(rule_hint(ptr) + "-extra", key + " \": \" " + extra_value);
  }
  // tail(i): members i.. after something was written, each behind ", ".
  auto tail = [&](size_t i) {
    std::string out;
    for (size_t j = i; j < members.size(); ++j) {
      std::string piece = "\", \" " + kv[j];
      out += (out.empty() ? "" : " ") + (members[j].required ? piece : "(" + piece + ")?");
    }
    if (extras) out += (out.empty() ? "" : " ") + std::string("(\", \" ") + extra_kv + ")*";
    return out;
  };
  // The first member written is some member i, all before it skipped (so optional).
  std::vector<std::string> alts;
  bool all_optional = true;
  for (size_t i = 0; i < members.size(); ++i) {
    std::string t = tail(i + 1);
    alts.push_back(kv[i] + (t.empty() ? "" : " " + rules_.add(rule_hint(ptr) + "-tail", t)));
    if (members[i].required) {
      all_optional = false;
      break;
    }
  }
  if (all_optional) {
    if (extras) alts.push_back(extra_kv + " (\", \" " + extra_kv + ")*");
    alts.push_back("\"\"");
  }
  std::string body;
  for (size_t i = 0; i < alts.size(); ++i) body += (i ? " | " : "") + alts[i];
  return "(\"{\" (" + body + ") \"}\")";
}

std::string SchemaCompiler::array_expr(const SchemaJson& s, const std::string& ptr) {
  std::vector<std::string> prefix;
  std::string rest;  // rule of the items after the prefix; empty: none allowed
  bool rest_open = true;
  auto items_ptr = child_ptr(ptr, "items");
  auto read_prefix = [&](const SchemaJson& arr, const std::string& aptr) {
    if (!arr.is_array()) schema_error(aptr, "must be an array of schemas");
    for (size_t i = 0; i < arr.size(); ++i) {
      prefix.push_back(visit(arr[i], child_ptr(aptr, std::to_string(i))));
    }
  };
  auto read_rest = [&](const char* key) {
    const auto& v = s[key];
    if (v.is_boolean() && !v.get<bool>()) {
      rest_open = false;
    } else {
      rest = visit(v, child_ptr(ptr, key));
    }
  };
  if (s.contains("prefixItems")) {
    read_prefix(s["prefixItems"], child_ptr(ptr, "prefixItems"));
    if (s.contains("items")) {
      read_rest("items");
    } else {
      rest_open = false;  // not generated: still valid, shorter
    }
  } else if (s.contains("items") && s["items"].is_array()) {
    read_prefix(s["items"], items_ptr);  // drafts 4-7 tuple form
    if (s.contains("additionalItems")) {
      read_rest("additionalItems");
    } else {
      rest_open = false;
    }
  } else if (s.contains("items")) {
    read_rest("items");
  } else {
    rest = visit(true, items_ptr);
  }
  long lo = s.contains("minItems") ? count_keyword(s, "minItems", ptr) : 0;
  long hi = s.contains("maxItems") ? count_keyword(s, "maxItems", ptr) : -1;
  long k = static_cast<long>(prefix.size());
  if (!rest_open && (hi < 0 || hi > k)) hi = k;
  if (hi >= 0 && lo > hi) {
    schema_error(ptr, "minItems " + std::to_string(lo) + " exceeds the " + std::to_string(hi) +
                          " items the schema allows");
  }
  // Items after the prefix: between max(0, lo-k) and hi-k of them.
  std::string body;
  long rest_lo = std::max(0L, lo - k);
  long rest_hi = hi < 0 ? -1 : hi - k;
  if (rest_open && rest_hi != 0 && (hi < 0 || hi > k)) {
    if (k == 0) {
      std::string more = "(\", \" " + rest + ")" +
                         count_suffix(std::max(0L, rest_lo - 1), rest_hi < 0 ? -1 : rest_hi - 1);
      if (rest_hi == 1) more = "";
      body = rest + (more.empty() ? "" : " " + more);
      if (rest_lo == 0) body = "(" + body + ")?";
    } else {
      body = "(\", \" " + rest + ")" + count_suffix(rest_lo, rest_hi);
    }
  }
  // The prefix, from its last item inwards: item j is optional once j >= minItems.
  long last = hi < 0 ? k : std::min(k, hi);
  for (long j = last - 1; j >= 0; --j) {
    std::string piece = (j > 0 ? "\", \" " : "") + prefix[j] + (body.empty() ? "" : " " + body);
    body = j < lo ? piece : "(" + piece + ")?";
  }
  return "(\"[\" " + (body.empty() ? "" : body + " ") + "\"]\")";
}

}  // namespace ps
