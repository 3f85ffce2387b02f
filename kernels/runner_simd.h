#pragma once
// The model's hand-written kernels use GCC vector extensions (F32x8) rather than intrinsics: the
// same source compiles to AVX2/AVX-512 on x86 and NEON on ARM. The build targets baseline x86-64
// (SSE2) so the binary runs anywhere; PS_ISA_DISPATCH compiles a hot function's body once more
// for x86-64-v3 (AVX2 + FMA) and x86-64-v4 (AVX-512) and runs the one of the active kernel ISA
// (kernel_isa.h: the widest this CPU has, or the one forced for tests and benchmarks). Functions
// the body calls must be inlined into it to get the wider code: mark them PS_INLINE.
#include <cstdint>
#include <cstring>

#include "kernels/kernel_isa.h"

// Defines `void NAME PARAMS` running `NAME##_body ARGS` compiled for the active kernel ISA.
// (GCC's target_clones did this with an ifunc chosen by the CPU alone, which cannot be forced.)
// PS_ISA_DISPATCH_WIDTH does the same for a body templated on its vector width in floats: 16
// (one AVX-512 register) on AVX-512, 8 on AVX2 and generic. PS_ISA_DEFINE names the three bodies.
#if PS_X86_KERNELS
#define PS_ISA_DISPATCH(NAME, PARAMS, ARGS) \
  PS_ISA_DEFINE(NAME, PARAMS, ARGS, NAME##_body, NAME##_body, NAME##_body)
#define PS_ISA_DISPATCH_WIDTH(NAME, PARAMS, ARGS) \
  PS_ISA_DEFINE(NAME, PARAMS, ARGS, NAME##_body<16>, NAME##_body<8>, NAME##_body<8>)
#define PS_ISA_DEFINE(NAME, PARAMS, ARGS, BODY512, BODY2, BODYG)        \
  __attribute__((target("arch=x86-64-v4"))) void NAME##_avx512 PARAMS { \
    BODY512 ARGS;                                                       \
  }                                                                     \
  __attribute__((target("arch=x86-64-v3"))) void NAME##_avx2 PARAMS {   \
    BODY2 ARGS;                                                         \
  }                                                                     \
  void NAME##_generic PARAMS {                                          \
    BODYG ARGS;                                                         \
  }                                                                     \
  void NAME PARAMS {                                                    \
    switch (active_kernel_isa()) {                                      \
      case KernelIsa::avx512:                                           \
        NAME##_avx512 ARGS;                                             \
        return;                                                         \
      case KernelIsa::avx2:                                             \
        NAME##_avx2 ARGS;                                               \
        return;                                                         \
      case KernelIsa::generic:                                          \
        break;                                                          \
    }                                                                   \
    NAME##_generic ARGS;                                                \
  }
#else
#define PS_ISA_DISPATCH(NAME, PARAMS, ARGS) \
  void NAME PARAMS {                        \
    NAME##_body ARGS;                       \
  }
#define PS_ISA_DISPATCH_WIDTH(NAME, PARAMS, ARGS) \
  void NAME PARAMS {                              \
    NAME##_body<8> ARGS;                          \
  }
// Off x86 the baseline is the only ISA (NEON on ARM): the AVX2 body, written for 8 floats.
#define PS_ISA_DEFINE(NAME, PARAMS, ARGS, BODY512, BODY2, BODYG) \
  void NAME PARAMS {                                             \
    BODY2 ARGS;                                                  \
  }
#endif

#define PS_INLINE inline __attribute__((always_inline))

// Only always-inlined functions pass F32x8 by value, so the ABI change GCC warns about for
// 32-byte vectors on baseline x86-64 never crosses a call boundary. GCC warns at every call
// site, so the suppression stays on for the kernel .cpp files that include this header.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ps {

// Floats per vector the kernels are written for (one AVX2 register; two SSE/NEON registers).
inline constexpr int kSimdLanes = 8;
typedef float F32x8 __attribute__((vector_size(32)));
typedef int32_t I32x8 __attribute__((vector_size(32)));

PS_INLINE F32x8 load8(const float* p) {
  F32x8 v;
  std::memcpy(&v, p, sizeof(v));  // unaligned load
  return v;
}

PS_INLINE void store8(float* p, const F32x8& v) {
  std::memcpy(p, &v, sizeof(v));
}

// `scalar - zero vector` is the broadcast idiom that compiles to one vbroadcastss: s - 0.0 is s
// for every s, so GCC drops the subtraction. `zero + s` is not (-0.0 + 0.0 is +0.0), and GCC
// keeps a scalar add in front of every broadcast, on the FMA ports; a braced list of 8 copies
// compiles to a chain of vinsertps (both seen in the hot loops).
PS_INLINE F32x8 splat8(float s) {
  return s - F32x8{};
}

PS_INLINE float hsum8(const F32x8& v) {
  return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

PS_INLINE float hmax8(const F32x8& v) {
  float m = v[0];
  for (int i = 1; i < 8; ++i) m = v[i] > m ? v[i] : m;
  return m;
}

// e^x for x <= ~88, relative error below 3e-7 (std::exp per lane is 5-10x slower and softmax
// calls it once per attended token). x = r·ln2 + f with |f| <= ln2/2; e^f by its Taylor series
// to degree 7; 2^r built in the exponent bits. Inputs below -87 flush to ~1e-38, not 0.
PS_INLINE F32x8 exp8(const F32x8& in) {
  F32x8 x = in;
  const F32x8 lo = splat8(-87.0f);
  const F32x8 hi = splat8(88.0f);
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  // Round to nearest by the 1.5·2^23 trick: exact for |t| < 2^22, no float->int round needed.
  const F32x8 magic = splat8(12582912.0f);
  const F32x8 r = (x * splat8(1.44269504088896341f) + magic) - magic;
  // ln2 split in a part exact in float and a correction, so r·ln2 loses no bits.
  F32x8 f = x - r * splat8(0.693359375f);
  f = f + r * splat8(2.12194440e-4f);
  F32x8 p = splat8(1.0f / 5040.0f);
  p = p * f + splat8(1.0f / 720.0f);
  p = p * f + splat8(1.0f / 120.0f);
  p = p * f + splat8(1.0f / 24.0f);
  p = p * f + splat8(1.0f / 6.0f);
  p = p * f + splat8(0.5f);
  p = p * f + splat8(1.0f);
  p = p * f + splat8(1.0f);
  const I32x8 e = (__builtin_convertvector(r, I32x8) + 127) << 23;
  F32x8 scale;
  std::memcpy(&scale, &e, sizeof(scale));
  return p * scale;
}

}  // namespace ps
