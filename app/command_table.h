#pragma once
// One dispatcher for both executables (`pagedserve`, `pagedserve-train`): --help, the command
// table, and the exit codes every command shares (2 for a usage error, 1 for any other).
#include <span>
#include <string>

namespace ps {

struct Command {
  const char* name;
  int (*run)(int argc, char** argv);
};

// Runs the command argv[1] names. `usage` prints the program's help; `elsewhere`, when given,
// returns a message for a command another binary has (or "" when it knows none).
int run_command(const char* program, int argc, char** argv, std::span<const Command> commands,
                void (*usage)(), std::string (*elsewhere)(const std::string& cmd) = nullptr);

}  // namespace ps
