#pragma once
// Which instruction set the hand-written CPU kernels run on. Chosen once per process: the widest
// this CPU has, unless forced (--kernel-isa, or PAGEDSERVE_KERNEL_ISA for tests and benchmarks)
// to a narrower one, so an AVX2-only host's code path is measured and tested on an AVX-512
// machine too. Every kernel (packed linear, paged attention, the element-wise ops) dispatches on
// the same choice, so a forced run is the whole AVX2 engine, not one kernel of it.
#include <string>
#include <vector>

// Whether this compiler builds the x86 kernels (GCC on x86-64: they use its target attributes).
// Elsewhere (ARM, clang-built fuzzers) only the generic kernels exist.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PS_X86_KERNELS 1
#else
#define PS_X86_KERNELS 0
#endif

namespace ps {

enum class KernelIsa { generic, avx2, avx512 };

const char* kernel_isa_name(KernelIsa isa);
// "generic" | "avx2" | "avx512"; throws std::invalid_argument naming the accepted values.
KernelIsa parse_kernel_isa(const std::string& name);

// Every ISA this CPU can run, narrowest first (always includes generic).
std::vector<KernelIsa> runnable_kernel_isas();
bool cpu_can_run(KernelIsa isa);

// The ISA the kernels use now: the forced one, else PAGEDSERVE_KERNEL_ISA, else the widest.
KernelIsa active_kernel_isa();
// Forces the kernels onto `isa` for the rest of the process (or until forced again). Throws
// std::invalid_argument when this CPU cannot run it, naming what it can.
void force_kernel_isa(KernelIsa isa);

// Whether this CPU has AVX512_BF16's `vdpbf16ps` (on top of the avx512 ISA): the bf16 dot
// products of --compute-dtype bfloat16 (packed_kernels.h, panel_avx512_bf16).
bool cpu_has_avx512_bf16();
// Whether this CPU has AVX512_VNNI's `vpdpbusd` (on top of the avx512 ISA): the int8 dot
// products of --compute-dtype int8 (panel_avx512_vnni).
bool cpu_has_avx512_vnni();
// Whether this CPU has AVX-VNNI's VEX `vpdpbusd` on 256-bit registers (on top of avx2): the int8
// dot products on the avx2 ISA (panel_avx2_vnni).
bool cpu_has_avx_vnni();
// Whether `isa` runs the bf16 dot products here (avx512 with AVX512_BF16; no other ISA has them).
bool bf16_dot_products_on(KernelIsa isa);
// Whether `isa` runs the int8 dot products here (avx512: AVX512_VNNI; avx2: AVX-VNNI), and the
// unit's name for messages ("avx512_vnni", "avx_vnni").
bool int8_dot_products_on(KernelIsa isa);
const char* int8_dot_unit(KernelIsa isa);

}  // namespace ps
