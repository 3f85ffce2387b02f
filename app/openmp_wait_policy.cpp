#include "app/openmp_wait_policy.h"

#include <unistd.h>

#include <cstdlib>

namespace ps {

void prefer_passive_openmp_wait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;  // the user's choice (or our re-exec)
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Only reached when exec failed (no /proc, say): keep running with the default policy. The
  // variable stays set for child processes, which is what the re-exec would have given them.
}

}  // namespace ps
