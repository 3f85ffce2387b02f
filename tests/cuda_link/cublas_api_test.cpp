// pagedserve loads cuBLAS with dlopen (cuda/cublas_api.h says why); this program links the
// library for real, so the names dlsym'd there are checked against the functions the linker
// resolves: each pointer must be the linked function itself. Runs without a GPU (loading cuBLAS
// needs none).
#include <gtest/gtest.h>

#include <string.h>  // strcasestr (GNU)

#include "cuda/cublas_api.h"

namespace ps {
namespace {

template <class F>
const void* addr(F f) {
  return reinterpret_cast<const void*>(f);
}

TEST(CublasApi, EveryLoadedEntryPointIsTheLinkedFunction) {
  const CublasApi& api = cublas_api();
  EXPECT_EQ(addr(api.create), addr(&cublasCreate_v2));
  EXPECT_EQ(addr(api.destroy), addr(&cublasDestroy_v2));
  EXPECT_EQ(addr(api.set_stream), addr(&cublasSetStream_v2));
  EXPECT_EQ(addr(api.set_workspace), addr(&cublasSetWorkspace_v2));
  using GemmEx = decltype(api.gemm_ex);
  EXPECT_EQ(addr(api.gemm_ex), addr(static_cast<GemmEx>(&cublasGemmEx)));
  EXPECT_EQ(addr(api.status_string), addr(&cublasGetStatusString));
  EXPECT_EQ(&cublas_api(), &api);  // loaded once
}

TEST(CublasApi, StatusStringsComeFromTheLibrary) {
  const char* ok = cublas_api().status_string(CUBLAS_STATUS_SUCCESS);
  ASSERT_NE(ok, nullptr);
  EXPECT_NE(::strcasestr(ok, "success"), nullptr) << ok;  // cuBLAS 13 says "success"
  EXPECT_STRNE(cublas_api().status_string(CUBLAS_STATUS_NOT_SUPPORTED), ok);
}

}  // namespace
}  // namespace ps
