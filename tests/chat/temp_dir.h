#pragma once
// A fresh directory under the system temp dir, removed with everything in it at scope end: the
// chat tests write real checkpoint files (tokenizer_config.json, chat_template.jinja) into it.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace ps::testing_util {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / (prefix + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace ps::testing_util
