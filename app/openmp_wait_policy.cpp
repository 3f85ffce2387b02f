#include "app/openmp_wait_policy.h"

#include <unistd.h>

#include <cstdlib>

namespace ps {

void prefer_short_openmp_spin(char** argv) {
  // The user's choice (or our re-exec): either variable set means hands off.
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) {
    return;
  }
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  if (setenv("GOMP_SPINCOUNT", "30000", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Only reached when exec failed (no /proc, say): keep running with the default policy. The
  // variables stay set for child processes, which is what the re-exec would have given them.
}

}  // namespace ps
