#include "model/model_dtype.h"

#include <stdexcept>

namespace ps {

ModelDtype parse_model_dtype(const std::string& name) {
  if (name == "auto") return ModelDtype::auto_dtype;
  if (name == "float32" || name == "float") return ModelDtype::f32;
  if (name == "bfloat16") return ModelDtype::bf16;
  if (name == "float16" || name == "half") return ModelDtype::f16;
  throw std::invalid_argument("unknown dtype '" + name +
                              "' (expected auto, float32, bfloat16 or float16)");
}

const char* model_dtype_name(ModelDtype d) {
  switch (d) {
    case ModelDtype::f32:
      return "float32";
    case ModelDtype::bf16:
      return "bfloat16";
    case ModelDtype::f16:
      return "float16";
    case ModelDtype::auto_dtype:
      break;
  }
  return "auto";
}

WeightQuantization parse_quantization(const std::string& name) {
  if (name == "none") return WeightQuantization::none;
  if (name == "int8") return WeightQuantization::int8;
  throw std::invalid_argument("unknown quantization '" + name + "' (expected none or int8)");
}

const char* quantization_name(WeightQuantization q) {
  return q == WeightQuantization::int8 ? "int8" : "none";
}

KvCacheDtype parse_kv_cache_dtype(const std::string& name) {
  if (name == "auto") return KvCacheDtype::auto_dtype;
  if (name == "float32" || name == "float") return KvCacheDtype::f32;
  if (name == "bfloat16") return KvCacheDtype::bf16;
  throw std::invalid_argument("unknown KV cache dtype '" + name +
                              "' (expected auto, float32 or bfloat16)");
}

const char* kv_cache_dtype_name(KvCacheDtype d) {
  if (d == KvCacheDtype::auto_dtype) return "auto";
  return d == KvCacheDtype::bf16 ? "bfloat16" : "float32";
}

ComputeDtype parse_compute_dtype(const std::string& name) {
  if (name == "float32" || name == "float") return ComputeDtype::f32;
  if (name == "bfloat16") return ComputeDtype::bf16;
  if (name == "int8") return ComputeDtype::int8;
  throw std::invalid_argument("unknown compute dtype '" + name +
                              "' (expected float32, bfloat16 or int8)");
}

const char* compute_dtype_name(ComputeDtype d) {
  switch (d) {
    case ComputeDtype::bf16:
      return "bfloat16";
    case ComputeDtype::int8:
      return "int8";
    case ComputeDtype::f32:
      break;
  }
  return "float32";
}

}  // namespace ps
