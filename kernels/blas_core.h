#pragma once
// Which kernel OpenBLAS runs. OpenBLAS picks its own by CPU (its OPENBLAS_CORETYPE environment
// variable, read when the library loads, overrides it), independent of our --kernel-isa: on an
// AVX-512 host, our forced AVX2 path is compared against OpenBLAS's AVX-512 kernel unless
// OPENBLAS_CORETYPE=Haswell is set too. Figures and the tuner's cache name it for that reason.
#include <string>

namespace ps {

// "Cooperlake", "Haswell", ... as OpenBLAS reports it; "unknown" when the BLAS that ATen
// loaded is not OpenBLAS (no openblas_get_corename symbol).
std::string blas_core_name();

}  // namespace ps
