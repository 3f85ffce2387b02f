#include "kernels/openmp_pool.h"

#include <omp.h>

namespace ps {

void release_this_threads_openmp_pool() {
  // OpenMP 5.0: a hard pause of the host frees the caller's thread pool (libgomp's
  // gomp_pause_host); it refuses (nonzero) inside a parallel region, where there is nothing to do.
  (void)omp_pause_resource_all(omp_pause_hard);
}

}  // namespace ps
