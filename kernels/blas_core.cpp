#include "kernels/blas_core.h"

#include <dlfcn.h>

namespace ps {

std::string blas_core_name() {
  // Looked up rather than linked: the library comes in through libtorch, and a build against
  // another BLAS must still link.
  using CoreName = char* (*)();
  const auto fn = reinterpret_cast<CoreName>(::dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = fn != nullptr ? fn() : nullptr;
  if (name == nullptr || *name == '\0') return "unknown";
  std::string s(name);
  while (!s.empty() && s.back() == ' ') s.pop_back();  // OpenBLAS pads some names
  return s;
}

}  // namespace ps
