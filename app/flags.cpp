#include "app/flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace ps {

Flags::Flags(int argc, char** argv, int first, std::set<std::string> valued,
             std::set<std::string> switches) {
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (switches.count(name)) {
      if (inline_value) throw UsageError("flag --" + name + " takes no value");
      switches_on_.insert(name);
    } else if (valued.count(name)) {
      if (inline_value) {
        values_[name] = *inline_value;
      } else if (i + 1 < argc) {
        values_[name] = argv[++i];
      } else {
        throw UsageError("flag --" + name + " needs a value");
      }
    } else {
      throw UsageError("unknown flag --" + name);
    }
  }
}

bool Flags::has(const std::string& name) const {
  return values_.count(name) > 0 || switches_on_.count(name) > 0;
}

std::string Flags::str(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::optional<std::string> Flags::opt(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

int64_t Flags::i64(const std::string& name, int64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (errno != 0 || end == it->second.c_str() || *end != '\0') {
    throw UsageError("flag --" + name + " expects an integer, got '" + it->second + "'");
  }
  return v;
}

double Flags::f64(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0' || !std::isfinite(v)) {
    throw UsageError("flag --" + name + " expects a number, got '" + it->second + "'");
  }
  return v;
}

bool Flags::on(const std::string& name) const {
  return switches_on_.count(name) > 0;
}

std::string Flags::required(const std::string& name) const {
  auto v = opt(name);
  if (!v || v->empty()) throw UsageError("missing --" + name + " (see --help)");
  return *v;
}

}  // namespace ps
