#pragma once
// A small `--name value` / `--flag` parser for the subcommands. Unknown flags are errors that
// name the flag, so a typo never silently falls back to a default.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Flags {
 public:
  // `valued`: flags that take a value; `switches`: flags that do not.
  Flags(int argc, char** argv, int first, std::set<std::string> valued,
        std::set<std::string> switches);

  const std::vector<std::string>& positional() const { return positional_; }
  bool has(const std::string& name) const;
  std::string str(const std::string& name, const std::string& fallback) const;
  std::optional<std::string> opt(const std::string& name) const;
  // The value of --name; throws UsageError "missing --name (see --help)" when absent or empty.
  std::string required(const std::string& name) const;
  int64_t i64(const std::string& name, int64_t fallback) const;
  double f64(const std::string& name, double fallback) const;
  bool on(const std::string& name) const;  // a switch was given

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> switches_on_;
  std::vector<std::string> positional_;
};

}  // namespace ps
