#include "cuda/cublas_api.h"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace ps {
namespace {

// The file names tried, in order: the toolkit's soname, then the unversioned development link.
constexpr const char* kCublasLibraries[] = {"libcublas.so." PS_CUBLAS_SOVERSION, "libcublas.so"};

template <class F>
void resolve(void* lib, const char* name, F* out) {
  void* p = ::dlsym(lib, name);
  if (p == nullptr) {
    throw std::runtime_error(std::string("cuBLAS: ") + name + " not found in the library (" +
                             ::dlerror() + ")");
  }
  *out = reinterpret_cast<F>(p);
}

CublasApi load() {
  void* lib = nullptr;
  std::string tried;
  for (const char* name : kCublasLibraries) {
    lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
    const char* why = ::dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (why ? why : name);
  }
  if (lib == nullptr) {
    throw std::runtime_error("cuBLAS could not be loaded (" + tried +
                             "); put the CUDA Toolkit's lib64 on LD_LIBRARY_PATH, or use "
                             "--device cpu");
  }
  CublasApi api;  // never dlclose'd: the executor's handles live as long as the process
  resolve(lib, "cublasCreate_v2", &api.create);
  resolve(lib, "cublasDestroy_v2", &api.destroy);
  resolve(lib, "cublasSetStream_v2", &api.set_stream);
  resolve(lib, "cublasSetWorkspace_v2", &api.set_workspace);
  resolve(lib, "cublasGemmEx", &api.gemm_ex);
  resolve(lib, "cublasGetStatusString", &api.status_string);
  return api;
}

}  // namespace

const CublasApi& cublas_api() {
  static const CublasApi api = load();  // a throw leaves it unset: the next call tries again
  return api;
}

}  // namespace ps
