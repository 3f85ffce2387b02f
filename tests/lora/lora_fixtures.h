#pragma once
// The base model and PyTorch-written adapters the multi-LoRA tests share (issue #22): the
// adapters are written once per test program by tests/lora/make_lora_adapters.py with real
// torch (Debian's python3-torch at /usr/bin/python3), for the shape of small_config().
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "checkpoint/loader.h"
#include "convert/lora_loader.h"
#include "convert/lora_merge.h"
#include "tests/engine/test_model.h"

namespace ps::lora_test {

inline ModelConfig base_config() {
  return testing_util::small_config("qwen3");
}

// Written on first use, removed when the program exits.
class AdapterDir {
 public:
  static const AdapterDir& get() {
    static const AdapterDir dir;
    return dir;
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  ~AdapterDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

 private:
  AdapterDir() {
    std::string pattern = ::testing::TempDir() + "pagedserve_lora_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    const ModelConfig c = base_config();
    const std::string cmd =
        "/usr/bin/python3 " PAGEDSERVE_SOURCE_DIR "/tests/lora/make_lora_adapters.py " + dir_ +
        " " + std::to_string(c.hidden_size) + " " + std::to_string(c.q_size()) + " " +
        std::to_string(c.kv_size()) + " " + std::to_string(c.intermediate_size) + " " +
        std::to_string(c.num_hidden_layers) + " " + std::to_string(c.vocab_size) + " > " + dir_ +
        "/make.log 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      throw std::runtime_error(
          "tests/lora/make_lora_adapters.py failed (it needs /usr/bin/python3 with torch: "
          "apt-get install python3-torch); see " +
          dir_ + "/make.log");
    }
  }
  std::string dir_;
};

// Adapter name -> what --lora-modules would be given.
inline std::string adapter_path(const std::string& name) {
  const AdapterDir& d = AdapterDir::get();
  return name == "gamma" ? d.path("gamma/gamma.pth") : d.path(name);
}

}  // namespace ps::lora_test
