// `pagedserve-train`: the commands that need libtorch (autograd, torch.save writing, the
// PyTorch oracle), kept out of the serving binary so `pagedserve` loads no libtorch or OpenCV.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "app/commands.h"
#include "app/flags.h"
#include "app/openmp_wait_policy.h"

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

}  // namespace

int main(int argc, char** argv) {
  ps::prefer_short_openmp_spin(argv);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "train-tiny") return ps::train_tiny_command(argc, argv);
    if (cmd == "eval") return ps::eval_command(argc, argv);
    if (cmd == "export") return ps::export_command(argc, argv);
    if (cmd == "generate") return ps::generate_command(argc, argv);
  } catch (const ps::UsageError& e) {
    std::fprintf(stderr, "pagedserve-train %s: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pagedserve-train %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "pagedserve-train: unknown command '%s'\n", cmd.c_str());
  usage();
  return 2;
}
