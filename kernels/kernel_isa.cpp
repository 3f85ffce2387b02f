#include "kernels/kernel_isa.h"

#include <atomic>
#include <cstdlib>
#include <stdexcept>

namespace ps {
namespace {

bool cpu_has_avx2_fma() {
#if PS_X86_KERNELS
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool cpu_has_avx512() {
#if PS_X86_KERNELS
  __builtin_cpu_init();
  // x86-64-v4, which the AVX-512 kernels are compiled for: F, VL, BW, DQ (and CD).
  return cpu_has_avx2_fma() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd");
#else
  return false;
#endif
}

}  // namespace

bool cpu_has_avx512_bf16() {
#if PS_X86_KERNELS
  __builtin_cpu_init();
  return cpu_has_avx512() && __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

bool cpu_has_avx512_vnni() {
#if PS_X86_KERNELS
  __builtin_cpu_init();
  return cpu_has_avx512() && __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

bool cpu_has_avx_vnni() {
#if PS_X86_KERNELS
  __builtin_cpu_init();
  return cpu_has_avx2_fma() && __builtin_cpu_supports("avxvnni");
#else
  return false;
#endif
}

bool bf16_dot_products_on(KernelIsa isa) {
  return isa == KernelIsa::avx512 && cpu_has_avx512_bf16();
}

bool int8_dot_products_on(KernelIsa isa) {
  if (isa == KernelIsa::avx512) return cpu_has_avx512_vnni();
  if (isa == KernelIsa::avx2) return cpu_has_avx_vnni();
  return false;
}

const char* int8_dot_unit(KernelIsa isa) {
  return isa == KernelIsa::avx512 ? "avx512_vnni" : "avx_vnni";
}

namespace {

std::string runnable_list() {
  std::string s;
  for (KernelIsa isa : runnable_kernel_isas())
    s += std::string(s.empty() ? "" : ", ") + kernel_isa_name(isa);
  return s;
}

KernelIsa initial_isa() {
  if (const char* env = std::getenv("PAGEDSERVE_KERNEL_ISA"); env != nullptr && *env != '\0') {
    const std::string want = env;
    if (want != "auto") {
      const KernelIsa isa = parse_kernel_isa(want);
      if (!cpu_can_run(isa)) {
        throw std::invalid_argument("PAGEDSERVE_KERNEL_ISA=" + want +
                                    ": this CPU cannot run it (it can run " + runnable_list() +
                                    ")");
      }
      return isa;
    }
  }
  return runnable_kernel_isas().back();
}

std::atomic<int>& active() {
  static std::atomic<int> isa{static_cast<int>(initial_isa())};
  return isa;
}

}  // namespace

const char* kernel_isa_name(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::avx512:
      return "avx512";
    case KernelIsa::avx2:
      return "avx2";
    case KernelIsa::generic:
      break;
  }
  return "generic";
}

KernelIsa parse_kernel_isa(const std::string& name) {
  if (name == "avx512") return KernelIsa::avx512;
  if (name == "avx2") return KernelIsa::avx2;
  if (name == "generic") return KernelIsa::generic;
  throw std::invalid_argument("unknown kernel ISA '" + name +
                              "' (expected auto, avx512, avx2 or generic)");
}

bool cpu_can_run(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::avx512:
      return cpu_has_avx512();
    case KernelIsa::avx2:
      return cpu_has_avx2_fma();
    case KernelIsa::generic:
      break;
  }
  return true;
}

std::vector<KernelIsa> runnable_kernel_isas() {
  std::vector<KernelIsa> out{KernelIsa::generic};
  if (cpu_can_run(KernelIsa::avx2)) out.push_back(KernelIsa::avx2);
  if (cpu_can_run(KernelIsa::avx512)) out.push_back(KernelIsa::avx512);
  return out;
}

KernelIsa active_kernel_isa() {
  return static_cast<KernelIsa>(active().load(std::memory_order_relaxed));
}

void force_kernel_isa(KernelIsa isa) {
  if (!cpu_can_run(isa)) {
    throw std::invalid_argument(std::string("kernel ISA ") + kernel_isa_name(isa) +
                                ": this CPU cannot run it (it can run " + runnable_list() + ")");
  }
  active().store(static_cast<int>(isa), std::memory_order_relaxed);
}

}  // namespace ps
