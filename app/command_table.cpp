#include "app/command_table.h"

#include <cstdio>
#include <cstring>
#include <exception>

#include "app/flags.h"
#include "app/openmp_wait_policy.h"

namespace ps {

int run_command(const char* program, int argc, char** argv, std::span<const Command> commands,
                void (*usage)(), std::string (*elsewhere)(const std::string& cmd)) {
  prefer_short_openmp_spin(argv);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  for (const Command& c : commands) {
    if (cmd != c.name) continue;
    try {
      return c.run(argc, argv);
    } catch (const UsageError& e) {
      std::fprintf(stderr, "%s %s: %s\n", program, cmd.c_str(), e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s %s: error: %s\n", program, cmd.c_str(), e.what());
      return 1;
    }
  }
  if (elsewhere != nullptr) {
    const std::string where = elsewhere(cmd);
    if (!where.empty()) {
      std::fprintf(stderr, "%s: %s\n", program, where.c_str());
      return 2;
    }
  }
  std::fprintf(stderr, "%s: unknown command '%s'\n", program, cmd.c_str());
  usage();
  return 2;
}

}  // namespace ps
