#pragma once
#include <string>

#include "app/flags.h"
#include "chat/chat_template.h"

namespace ps {

// --chat-template NAME wins; else what tokenizer_config.json's template looks like; else ChatML
// (with a note on stderr naming `command`, so the user knows to pass the flag).
ChatTemplate chat_template_from_flags(const Flags& flags, const std::string& dir,
                                      const char* command);

}  // namespace ps
