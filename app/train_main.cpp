// `pagedserve-train`: the commands that need libtorch (autograd, torch.save writing, the
// PyTorch oracle), kept out of the serving binary so `pagedserve` loads no libtorch or OpenCV.
#include <cstdio>

#include "app/command_table.h"
#include "app/commands.h"

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: pagedserve-train <command> [flags]\n"
               "commands:\n"
               "  train-tiny  train the tiny chat model (--data FILE.jsonl --out DIR)\n"
               "  eval        greedy exact-match / similarity on a JSONL of questions\n"
               "  export      checkpoint -> torch.save state_dict (.pth)\n"
               "  generate    as pagedserve generate, plus --naive (the PyTorch oracle)\n"
               "run `pagedserve-train <command> --help` for its flags; serving, chat, "
               "generate, bench, convert and merge-lora are `pagedserve` commands\n");
}

constexpr ps::Command kCommands[] = {
    {"train-tiny", ps::train_tiny_command},
    {"eval", ps::eval_command},
    {"export", ps::export_command},
    {"generate", ps::generate_command},
};

}  // namespace

int main(int argc, char** argv) {
  return ps::run_command("pagedserve-train", argc, argv, kCommands, usage);
}
