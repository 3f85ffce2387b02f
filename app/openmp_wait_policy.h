#pragma once

namespace ps {

// Makes OpenMP's idle worker threads spin briefly and then sleep (OMP_WAIT_POLICY=passive with
// GOMP_SPINCOUNT=30000, about 0.3 ms by libgomp's estimate) unless the user set either variable.
// libgomp reads them once, when it is loaded, before main, so this sets them and re-executes the
// binary (same pid, same arguments); if that fails it returns and the process runs with
// libgomp's defaults.
//
// Why sleep at all: the model's kernels are OpenMP parallel regions, and a server shares its
// cores with HTTP threads, clients and other processes; workers spinning for libgomp's default
// ~3 ms after each region took the time those needed (measured on the 2-core machine while
// another VM loaded the host: batch-1 TPOT 8.4-8.8 ms spinning vs 6.5-7.0 ms passive).
//
// Why spin briefly: with no spin every region of the forward started by waking a sleeping
// worker through the kernel, ~70 us a region on the 2-core KVM machine, and a batch-1 decode
// token has 41 regions. With the spin covering the microseconds between one step's regions
// (and one OpenMP pool in the process, kernels/openmp_pool.h) batch-1 TPOT went 5.2 -> 2.2 ms and
// 64-sequence throughput +17-19% (bench offline, issue #14's closing note); between steps and
// when idle the workers still sleep.
void prefer_short_openmp_spin(char** argv);

}  // namespace ps
