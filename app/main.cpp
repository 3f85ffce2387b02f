// `pagedserve`: the serving binary (pagedserve-train has the commands that need libtorch). It
// only dispatches to subcommands (app/commands.h); all logic lives in the libraries.
#include <cstdio>
#include <string>

#include "app/command_table.h"
#include "app/commands.h"

namespace {

void usage() {
  std::fprintf(
      stderr,
      "usage: pagedserve <command> [flags]\n"
      "commands:\n"
      "  serve            OpenAI-compatible HTTP server (--model DIR --host --port ...)\n"
      "  chat             terminal chat (--model DIR or --url http://HOST:PORT)\n"
      "  generate         offline generation (--model DIR --prompt TEXT | --prompts FILE.jsonl)\n"
      "  bench offline    continuous batching vs single-request throughput\n"
      "  convert          torch.save state_dict (.pth) -> Hugging Face checkpoint\n"
      "  merge-lora       merge a LoRA adapter into a checkpoint\n"
      "  make-tiny-model  write a random tiny Hugging Face checkpoint (DIR)\n"
      "run `pagedserve <command> --help` for its flags\n"
      "train-tiny, eval and export (the commands that need libtorch) are in pagedserve-train\n");
}

// The commands that need libtorch live in the other binary; say so instead of "unknown".
std::string elsewhere(const std::string& cmd) {
  if (cmd != "train-tiny" && cmd != "eval" && cmd != "export") return "";
  return "'" + cmd +
         "' is a command of pagedserve-train, the binary that links libtorch (build it with "
         "scripts/test.sh, or cmake --build build --target pagedserve-train): run "
         "build/app/pagedserve-train " +
         cmd;
}

constexpr ps::Command kCommands[] = {
    {"serve", ps::serve_command},
    {"generate", ps::generate_command},
    {"chat", ps::chat_command},
    {"bench", ps::bench_command},
    {"make-tiny-model", ps::make_tiny_model_command},
    {"convert", ps::convert_command},
    {"merge-lora", ps::merge_lora_command},
};

}  // namespace

int main(int argc, char** argv) {
  return ps::run_command("pagedserve", argc, argv, kCommands, usage, elsewhere);
}
