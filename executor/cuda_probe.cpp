// probe_cuda (device_select.h). The only file of model/ outside cuda/ that includes a CUDA
// header, and only in a PAGEDSERVE_CUDA build: it asks the runtime how many devices it sees,
// which on a machine without a driver or a GPU is an error code, never a crash.
#include "executor/device_select.h"

#ifdef PAGEDSERVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ps {

CudaAvailability probe_cuda() {
  CudaAvailability a;
#ifdef PAGEDSERVE_CUDA
  a.built_with_cuda = true;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    a.device_count = 0;
    // Without libcuda (no NVIDIA driver) the runtime reports an "insufficient" driver; say
    // what that means here.
    a.detail = std::string(e == cudaErrorInsufficientDriver ? "no NVIDIA driver is loaded; " : "") +
               "CUDA runtime: " + cudaGetErrorString(e);
    (void)cudaGetLastError();  // the error is sticky only for this query; clear it
    return a;
  }
  a.device_count = count;
  if (count > 0) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) a.detail = prop.name;
  } else {
    a.detail = "CUDA runtime: no device";
  }
#endif
  return a;
}

}  // namespace ps
