// Each grammar accepts a subset of what its RFC allows, never more: dates between 1000 and 9999
// with day-of-month limits (29 February left out, since it needs the year), RFC 3339 times
// without leap seconds, e-mail addresses as dot-atoms at a dotted domain, IPv4 without leading
// zeros (Python's ipaddress rejects them), URIs as a scheme, ":" and at least one character
// RFC 3986 allows unescaped (or a %XX escape; no spaces, quotes or backslashes). Not enforced
// (so refused): hostname, ipv6 and the rest, whose length or syntax rules this grammar form
// cannot state briefly.

#include "structured/json_formats.h"

#include <map>

namespace ps {
namespace {

const std::string kDate =
    "[1-9] [0-9]{3} \"-\" ((\"0\" [13578] | \"1\" [02]) \"-\" (\"0\" [1-9] | [12] [0-9] | \"3\" "
    "[01]) | (\"0\" [469] | \"11\") \"-\" (\"0\" [1-9] | [12] [0-9] | \"30\") | \"02-\" (\"0\" "
    "[1-9] | \"1\" [0-9] | \"2\" [0-8]))";
const std::string kTime =
    "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] (\".\" [0-9]{1,6})? (\"Z\" | "
    "[+-] ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9])";
const std::string kHex = "[0-9a-f]";
const std::string kUuid = kHex + "{8} \"-\" " + kHex + "{4} \"-\" " + kHex + "{4} \"-\" " + kHex +
                          "{4} \"-\" " + kHex + "{12}";
const std::string kAtom = "[a-zA-Z0-9_+-]+";
const std::string kLabel = "[a-zA-Z0-9]+ (\"-\" [a-zA-Z0-9]+)*";
const std::string kEmail =
    kAtom + " (\".\" " + kAtom + ")* \"@\" " + kLabel + " (\".\" " + kLabel + ")+";
const std::string kOctet =
    "(\"25\" [0-5] | \"2\" [0-4] [0-9] | \"1\" [0-9] [0-9] | [1-9] [0-9] | [0-9])";
const std::string kIpv4 = kOctet + " \".\" " + kOctet + " \".\" " + kOctet + " \".\" " + kOctet;

const std::string kUri =
    "[a-zA-Z] [a-zA-Z0-9+.-]* \":\" ([a-zA-Z0-9._~:/?#@!$&'()*+,;=-] | \"[\" | \"]\" | \"%\" "
    "[0-9a-fA-F] [0-9a-fA-F])+";

const std::map<std::string, std::string>& formats() {
  static const std::map<std::string, std::string> table = {
      {"date", kDate}, {"time", kTime},   {"date-time", kDate + " \"T\" " + kTime},
      {"uuid", kUuid}, {"email", kEmail}, {"ipv4", kIpv4}, {"uri", kUri},
  };
  return table;
}

}  // namespace

std::optional<std::string> format_gbnf(const std::string& format) {
  auto it = formats().find(format);
  if (it == formats().end()) return std::nullopt;
  return "(" + it->second + ")";
}

std::string supported_formats() {
  std::string out;
  for (const auto& [name, _] : formats()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace ps
