#pragma once
// The six cuBLAS entry points the CUDA executor calls, loaded with dlopen the first time a CUDA
// executor is built, not linked into pagedserve.
//
// Why: linking libcublas (and the libcublasLt it needs) made every pagedserve process 217 MB
// larger before main, GPU or not (max RSS of a program that only links it: 218 MB vs 1.2 MB
// without; the dynamic linker touches the libraries' relocated data), so a CPU server on a
// machine that merely has the CUDA Toolkit paid for it: +217 MB on the Qwen3-0.6B-shaped bf16
// run, 1.44x -> 1.63x the checkpoint. The pointer types come from cuBLAS's own header, so a
// changed signature is a compile error; tests/cuda_host links the library for real and checks
// that each pointer loaded here is the linked function.
#include <cublas_v2.h>

namespace ps {

struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  // The C entry point (the header adds a C++ overload taking cudaDataType).
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                            int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                            cublasGemmAlgo_t) = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// Loaded once (thread-safe); throws std::runtime_error naming the library and what dlopen or
// dlsym said when it cannot be loaded.
const CublasApi& cublas_api();

}  // namespace ps
