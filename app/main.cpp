// `pagedserve`: the one command. It only dispatches to subcommands (app/commands.h); all logic
// lives in the libraries.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "app/commands.h"
#include "app/flags.h"
#include "app/openmp_wait_policy.h"

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

}  // namespace

int main(int argc, char** argv) {
  ps::prefer_short_openmp_spin(argv);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "serve") return ps::serve_command(argc, argv);
    if (cmd == "generate") return ps::generate_command(argc, argv);
    if (cmd == "chat") return ps::chat_command(argc, argv);
    if (cmd == "bench") return ps::bench_command(argc, argv);
    if (cmd == "make-tiny-model") return ps::make_tiny_model_command(argc, argv);
    if (cmd == "convert") return ps::convert_command(argc, argv);
    if (cmd == "merge-lora") return ps::merge_lora_command(argc, argv);
  } catch (const ps::UsageError& e) {
    std::fprintf(stderr, "pagedserve %s: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pagedserve %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
  if (cmd == "train-tiny" || cmd == "eval" || cmd == "export") {
    // The serving binary links no libtorch (docs/architecture.md); these commands need it.
    std::fprintf(stderr,
                 "pagedserve: '%s' is a command of pagedserve-train, the binary that links "
                 "libtorch (build it with scripts/test.sh, or cmake --build build --target "
                 "pagedserve-train): run build/app/pagedserve-train %s\n",
                 cmd.c_str(), cmd.c_str());
    return 2;
  }
  std::fprintf(stderr, "pagedserve: unknown command '%s'\n", cmd.c_str());
  usage();
  return 2;
}
