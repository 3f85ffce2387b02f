// The chat template choice shared by `serve` and `chat`, so both render prompts alike.
#include "app/chat_template_flag.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ps {

namespace {

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

ChatTemplate chat_template_from_flags(const Flags& flags, const std::string& dir,
                                      const char* command) {
  if (auto name = flags.opt("chat-template")) {
    auto t = ChatTemplate::from_name(*name);
    if (!t) {
      throw UsageError("--chat-template " + *name + ": unknown; use one of " +
                       ChatTemplate::known_names());
    }
    return *t;
  }
  std::string config_path = dir + "/tokenizer_config.json";
  if (std::filesystem::exists(config_path)) {
    if (auto t = ChatTemplate::detect(read_whole_file(config_path))) return *t;
  }
  std::fprintf(stderr,
               "pagedserve %s: no known chat template in %s; using chatml (pass "
               "--chat-template to choose)\n",
               command, config_path.c_str());
  return ChatTemplate(ChatTemplateKind::kChatML);
}

}  // namespace ps
