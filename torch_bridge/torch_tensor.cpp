#include "torch_bridge/torch_tensor.h"

#include <memory>
#include <stdexcept>
#include <string>

namespace ps {

at::ScalarType to_torch_dtype(DType t) {
  switch (t) {
    case DType::f32:
      return at::kFloat;
    case DType::bf16:
      return at::kBFloat16;
    case DType::f16:
      return at::kHalf;
    case DType::f64:
      return at::kDouble;
    case DType::i64:
      return at::kLong;
    case DType::i32:
      return at::kInt;
    case DType::i16:
      return at::kShort;
    case DType::i8:
      return at::kChar;
    case DType::u8:
      return at::kByte;
    case DType::boolean:
      return at::kBool;
  }
  return at::kFloat;
}

DType from_torch_dtype(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return DType::f32;
    case at::kBFloat16:
      return DType::bf16;
    case at::kHalf:
      return DType::f16;
    case at::kDouble:
      return DType::f64;
    case at::kLong:
      return DType::i64;
    case at::kInt:
      return DType::i32;
    case at::kShort:
      return DType::i16;
    case at::kChar:
      return DType::i8;
    case at::kByte:
      return DType::u8;
    case at::kBool:
      return DType::boolean;
    default:
      break;
  }
  throw std::invalid_argument(std::string("no ps::Tensor dtype for torch ") + at::toString(t));
}

at::Tensor to_torch(const Tensor& t) {
  if (!t.defined()) return {};
  auto keep = std::make_shared<Tensor>(t);
  return at::from_blob(
      t.data_ptr(), t.sizes(), [keep](void*) {},
      at::TensorOptions().dtype(to_torch_dtype(t.dtype())));
}

Tensor from_torch(const at::Tensor& t) {
  if (!t.defined()) return {};
  auto keep = std::make_shared<at::Tensor>(t.detach().contiguous());
  std::vector<int64_t> shape(keep->sizes().begin(), keep->sizes().end());
  return Tensor::view(keep->data_ptr(), std::move(shape), from_torch_dtype(keep->scalar_type()),
                      std::shared_ptr<const void>(keep, keep.get()));
}

namespace {

template <typename To, typename From, typename Convert>
void convert_all(const BasicModelWeights<From>& from, BasicModelWeights<To>& to, Convert convert) {
  to.config = from.config;
  to.mapped = from.mapped;
  BasicModelWeights<From> src = from;  // shares the tensors; slots need a mutable struct
  const auto src_slots = basic_weight_slots<From>(src);
  const auto dst_slots = basic_weight_slots<To>(to);
  for (size_t i = 0; i < src_slots.size(); ++i)
    *dst_slots[i].tensor = convert(*src_slots[i].tensor);
  if (from.config.tie_word_embeddings) {
    to.lm_head = to.embed_tokens;
  } else if (from.lm_head.defined() && !to.lm_head.defined()) {
    to.lm_head = convert(from.lm_head);
  }
}

}  // namespace

TorchWeights to_torch(const ModelWeights& w) {
  TorchWeights out;
  convert_all<at::Tensor, Tensor>(w, out, [](const Tensor& t) { return to_torch(t); });
  return out;
}

ModelWeights from_torch(const TorchWeights& w) {
  ModelWeights out;
  convert_all<Tensor, at::Tensor>(w, out, [](const at::Tensor& t) { return from_torch(t); });
  return out;
}

std::vector<TorchWeightSlot> weight_slots(TorchWeights& w) {
  return basic_weight_slots<at::Tensor>(w);
}

}  // namespace ps
