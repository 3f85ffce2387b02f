#pragma once
// One OpenMP thread pool per process, for the kernels' sake.
//
// libgomp keeps a pool of worker threads per thread that starts parallel regions. Loading and
// packing a model run on the main thread; the forward runs on the engine thread: two pools, four
// threads on a 2-core machine. When a process holds more OpenMP threads than CPUs, libgomp cuts
// a worker's spin before it sleeps to almost nothing, so every parallel region of the forward
// began by waking the worker through the kernel: ~70 us a region on the 2-core KVM machine
// (an empty at::parallel_for from a second thread, against ~0.3 us with one pool and a spin),
// and a batch-1 decode token has 41 regions. app/openmp_wait_policy.h sets the spin.
namespace ps {

// Frees the calling thread's OpenMP pool (its workers exit). Call it on a thread that is done
// with parallel work, before another thread starts its own: EngineCore::start does, on the
// thread that built the runner. A later parallel region on this thread makes a new pool.
void release_this_threads_openmp_pool();

}  // namespace ps
