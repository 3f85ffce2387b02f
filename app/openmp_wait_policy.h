#pragma once

namespace ps {

// Makes OpenMP's idle worker threads sleep instead of spinning (OMP_WAIT_POLICY=passive) unless
// the user chose a policy. libgomp reads the variable once, when it is loaded, before main, so
// this sets it and re-executes the binary (same pid, same arguments); if that fails it returns
// and the process runs with libgomp's default.
//
// Why: the model's kernels are OpenMP parallel regions, and with the default policy a worker
// spins for a while after each one. When nothing else wants the cores that costs nothing, but
// a server shares its cores with HTTP threads, clients and other processes, and there the
// spinning workers took the time those needed. Measured on the 2-core machine in alternating
// runs while another VM loaded the host: batch-1 TPOT 8.4-8.8 ms spinning vs 6.5-7.0 ms passive
// in every pair; `bench/http_vs_offline.sh` serve/offline mostly 0.83-0.91 vs 0.92-1.0 (noisy);
// offline throughput did not drop.
void prefer_passive_openmp_wait(char** argv);

}  // namespace ps
