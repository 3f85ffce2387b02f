#pragma once
// A hand-built token table (id -> raw bytes, special flag) for detokenizer and stop tests.
#include <memory>
#include <string>
#include <vector>

namespace ps::testing_tables {

struct TokenTable {
  std::shared_ptr<std::vector<std::string>> bytes = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<std::vector<bool>> special = std::make_shared<std::vector<bool>>();

  int32_t add(std::string b, bool is_special = false) {
    bytes->push_back(std::move(b));
    special->push_back(is_special);
    return static_cast<int32_t>(bytes->size() - 1);
  }
};

inline const std::string kFFFD = "\xEF\xBF\xBD";
inline const std::string kZhong = "\xE4\xB8\xAD";     // 中, 3 bytes
inline const std::string kWen = "\xE6\x96\x87";       // 文, 3 bytes
inline const std::string kGrin = "\xF0\x9F\x98\x80";  // 😀, 4 bytes

}  // namespace ps::testing_tables
