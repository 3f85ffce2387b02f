#pragma once
// How the weights and the KV cache are held in memory (--dtype, --quantization,
// --kv-cache-dtype; vLLM's flag names and values), and what the CPU projections compute in
// (--compute-dtype). By default compute is fp32: narrow weights are widened in the packed
// kernel's registers, so a smaller dtype cuts the bytes a decode step reads, which is what
// limits batch-1 speed. Torch-free header.
#include <cstdint>
#include <string>

namespace ps {

// --dtype auto|float32|bfloat16|float16 (also float, half). auto: the checkpoint's dtype (that
// of its first layer's q_proj), fp32 checkpoints staying fp32.
enum class ModelDtype { auto_dtype, f32, bf16, f16 };
ModelDtype parse_model_dtype(const std::string& name);  // throws std::invalid_argument
const char* model_dtype_name(ModelDtype d);             // "auto" | "float32" | ...

// --quantization none|int8: int8 is symmetric weight-only, quantized at load from whatever the
// checkpoint holds, one scale per output channel or per `group` input columns.
enum class WeightQuantization { none, int8 };
WeightQuantization parse_quantization(const std::string& name);  // throws std::invalid_argument
const char* quantization_name(WeightQuantization q);

// --kv-cache-dtype auto|float32|bfloat16. auto is the model's dtype, as vLLM's is: bf16 weights
// (after --dtype) keep a bf16 cache, which is what the model computes K and V in in its own
// framework, and what halves the bytes decode attention reads; fp32 and fp16 weights an fp32 one
// (the cache has no fp16 form, and bf16 would drop fp16's mantissa bits). Attention computes in
// fp32 either way. Resolve auto (resolve_kv_cache_dtype) before asking for bytes.
enum class KvCacheDtype { auto_dtype, f32, bf16 };
KvCacheDtype parse_kv_cache_dtype(const std::string& name);  // throws std::invalid_argument
const char* kv_cache_dtype_name(KvCacheDtype d);             // "auto" | "float32" | "bfloat16"
inline KvCacheDtype resolve_kv_cache_dtype(KvCacheDtype requested, bool bf16_model) {
  if (requested != KvCacheDtype::auto_dtype) return requested;
  return bf16_model ? KvCacheDtype::bf16 : KvCacheDtype::f32;
}
inline int64_t kv_cache_dtype_bytes(KvCacheDtype d) {
  return d == KvCacheDtype::bf16 ? 2 : 4;  // auto must be resolved first; counted as fp32
}

// --compute-dtype float32|bfloat16|int8: what the CPU projections multiply in. float32 (the
// default): narrow weights widened in registers, the fp32 product exactly. bfloat16: float weights
// packed as bf16 and activations rounded to bf16, two exact bf16 products per fp32 accumulation
// step (AVX512_BF16's vdpbf16ps; packed_kernels.h), as a bf16 model computes in its own framework.
// int8 (with --quantization int8 per channel): activations quantized per token to int8 too,
// exact int32 dot products (vpdpbusd: AVX512_VNNI's, or AVX-VNNI's on the avx2 kernel ISA)
// scaled once per output ("w8a8").
enum class ComputeDtype { f32, bf16, int8 };
ComputeDtype parse_compute_dtype(const std::string& name);  // throws std::invalid_argument
const char* compute_dtype_name(ComputeDtype d);

}  // namespace ps
