#include "model/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "model/half_bits.h"

namespace ps {
namespace {

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) {
    if (s < 0) throw std::invalid_argument("Tensor: negative size in " + shape_text(shape));
    n *= s;
  }
  return n;
}

bool is_floating(DType t) {
  return t == DType::f32 || t == DType::bf16 || t == DType::f16 || t == DType::f64;
}

float load_float(const void* p, DType t, int64_t i) {
  switch (t) {
    case DType::f32:
      return static_cast<const float*>(p)[i];
    case DType::bf16:
      return bf16_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::f16:
      return f16_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::f64:
      return float(static_cast<const double*>(p)[i]);
    default:
      break;
  }
  throw std::logic_error("Tensor: not a floating dtype");
}

void store_float(void* p, DType t, int64_t i, float v) {
  switch (t) {
    case DType::f32:
      static_cast<float*>(p)[i] = v;
      return;
    case DType::bf16:
      static_cast<uint16_t*>(p)[i] = float_to_bf16(v);
      return;
    case DType::f16:
      static_cast<uint16_t*>(p)[i] = float_to_f16(v);
      return;
    case DType::f64:
      static_cast<double*>(p)[i] = double(v);
      return;
    default:
      break;
  }
  throw std::logic_error("Tensor: not a floating dtype");
}

template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::f64;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::i64;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::i32;
}
template <>
constexpr DType dtype_of<int16_t>() {
  return DType::i16;
}
template <>
constexpr DType dtype_of<int8_t>() {
  return DType::i8;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::u8;
}

}  // namespace

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f64:
    case DType::i64:
      return 8;
    case DType::f32:
    case DType::i32:
      return 4;
    case DType::bf16:
    case DType::f16:
    case DType::i16:
      return 2;
    case DType::i8:
    case DType::u8:
    case DType::boolean:
      return 1;
  }
  return 1;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "float32";
    case DType::bf16:
      return "bfloat16";
    case DType::f16:
      return "float16";
    case DType::f64:
      return "float64";
    case DType::i64:
      return "int64";
    case DType::i32:
      return "int32";
    case DType::i16:
      return "int16";
    case DType::i8:
      return "int8";
    case DType::u8:
      return "uint8";
    case DType::boolean:
      return "bool";
  }
  return "?";
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Tensor Tensor::empty(std::vector<int64_t> shape, DType dtype) {
  Tensor t;
  t.numel_ = count(shape);
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.defined_ = true;
  // 64-byte alignment: the kernels' vector loads of fp32 rows and the panels packed from them.
  const size_t bytes = (std::max<size_t>(t.nbytes(), 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) throw std::bad_alloc();
  t.data_ = p;
  t.owner_ = std::shared_ptr<const void>(p, [](const void* q) { std::free(const_cast<void*>(q)); });
  return t;
}

Tensor Tensor::zeros(std::vector<int64_t> shape, DType dtype) {
  Tensor t = empty(std::move(shape), dtype);
  if (t.nbytes() > 0) std::memset(t.data_, 0, t.nbytes());
  return t;
}

Tensor Tensor::view(void* data, std::vector<int64_t> shape, DType dtype,
                    std::shared_ptr<const void> owner) {
  Tensor t;
  t.numel_ = count(shape);
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.defined_ = true;
  t.data_ = data;
  t.owner_ = std::move(owner);
  return t;
}

Tensor Tensor::from_floats(std::span<const float> values, std::vector<int64_t> shape) {
  if (count(shape) != int64_t(values.size())) {
    throw std::invalid_argument("Tensor::from_floats: " + std::to_string(values.size()) +
                                " values do not fill " + shape_text(shape));
  }
  Tensor t = empty(std::move(shape), DType::f32);
  if (!values.empty()) std::memcpy(t.data_, values.data(), values.size_bytes());
  return t;
}

int64_t Tensor::size(int64_t d) const {
  const int64_t n = dim();
  if (d < 0) d += n;
  if (d < 0 || d >= n) {
    throw std::out_of_range("Tensor::size: dim " + std::to_string(d) + " of a " +
                            std::to_string(n) + "-D tensor");
  }
  return shape_[size_t(d)];
}

template <typename T>
T* Tensor::data_ptr() const {
  if (dtype_ != dtype_of<T>()) {
    throw std::logic_error(std::string("Tensor::data_ptr: the tensor is ") + dtype_name(dtype_));
  }
  return static_cast<T*>(data_);
}
template float* Tensor::data_ptr<float>() const;
template double* Tensor::data_ptr<double>() const;
template int64_t* Tensor::data_ptr<int64_t>() const;
template int32_t* Tensor::data_ptr<int32_t>() const;
template int16_t* Tensor::data_ptr<int16_t>() const;
template int8_t* Tensor::data_ptr<int8_t>() const;
template uint8_t* Tensor::data_ptr<uint8_t>() const;

Tensor Tensor::to(DType t) const {
  if (!defined_) throw std::logic_error("Tensor::to: undefined tensor");
  if (t == dtype_) return *this;
  if (!is_floating(t) || !is_floating(dtype_)) {
    throw std::invalid_argument(std::string("Tensor::to: cannot convert ") + dtype_name(dtype_) +
                                " to " + dtype_name(t));
  }
  Tensor out = empty(shape_, t);
  for (int64_t i = 0; i < numel_; ++i) {
    if (dtype_ == DType::f64 && t == DType::f32) {  // no double rounding through float
      static_cast<float*>(out.data_)[i] = float(static_cast<const double*>(data_)[i]);
    } else if (t == DType::f64) {
      static_cast<double*>(out.data_)[i] = double(load_float(data_, dtype_, i));
    } else {
      store_float(out.data_, t, i, load_float(data_, dtype_, i));
    }
  }
  return out;
}

Tensor Tensor::clone() const {
  if (!defined_) return {};
  Tensor out = empty(shape_, dtype_);
  if (nbytes() > 0) std::memcpy(out.data_, data_, nbytes());
  return out;
}

Tensor Tensor::reshape(std::vector<int64_t> shape) const {
  if (count(shape) != numel_) {
    throw std::invalid_argument("Tensor::reshape: " + shape_text(shape_) + " to " +
                                shape_text(shape));
  }
  Tensor out = *this;
  out.shape_ = std::move(shape);
  return out;
}

Tensor Tensor::rows(int64_t begin, int64_t count) const {
  if (shape_.empty() || begin < 0 || count < 0 || begin + count > shape_[0]) {
    throw std::invalid_argument("Tensor::rows: [" + std::to_string(begin) + ", " +
                                std::to_string(begin + count) + ") of " + shape_text(shape_));
  }
  const int64_t row_elems = shape_[0] == 0 ? 0 : numel_ / shape_[0];
  Tensor out = *this;
  out.shape_[0] = count;
  out.numel_ = row_elems * count;
  out.data_ = static_cast<uint8_t*>(data_) + size_t(begin * row_elems) * dtype_size(dtype_);
  return out;
}

void Tensor::fill(float value) {
  for (int64_t i = 0; i < numel_; ++i) store_float(data_, dtype_, i, value);
}

bool Tensor::is_same(const Tensor& other) const {
  return defined_ == other.defined_ && data_ == other.data_ && shape_ == other.shape_ &&
         dtype_ == other.dtype_;
}

double Tensor::value_at(int64_t i) const {
  if (i < 0 || i >= numel_) throw std::out_of_range("Tensor::value_at");
  if (dtype_ == DType::f64) return static_cast<const double*>(data_)[i];
  return double(load_float(data_, dtype_, i));
}

Tensor cat_rows(const std::vector<Tensor>& parts) {
  if (parts.empty()) throw std::invalid_argument("cat_rows: no tensors");
  const Tensor& first = parts.front();
  std::vector<int64_t> shape = first.sizes();
  if (shape.empty()) throw std::invalid_argument("cat_rows: a 0-D tensor");
  int64_t rows = 0;
  for (const Tensor& p : parts) {
    if (!p.defined() || p.dtype() != first.dtype() || p.dim() != first.dim() ||
        !std::equal(p.sizes().begin() + 1, p.sizes().end(), shape.begin() + 1)) {
      throw std::invalid_argument("cat_rows: tensors of different dtypes or trailing sizes");
    }
    rows += p.size(0);
  }
  shape[0] = rows;
  Tensor out = Tensor::empty(shape, first.dtype());
  auto* dst = static_cast<uint8_t*>(out.data_ptr());
  for (const Tensor& p : parts) {
    if (p.nbytes() > 0) std::memcpy(dst, p.data_ptr(), p.nbytes());
    dst += p.nbytes();
  }
  return out;
}

Tensor cat_cols(const std::vector<Tensor>& parts) {
  if (parts.empty()) throw std::invalid_argument("cat_cols: no tensors");
  const Tensor& first = parts.front();
  if (first.dim() != 2) throw std::invalid_argument("cat_cols: tensors must be 2-D");
  const int64_t rows = first.size(0);
  int64_t cols = 0;
  for (const Tensor& p : parts) {
    if (!p.defined() || p.dtype() != first.dtype() || p.dim() != 2 || p.size(0) != rows) {
      throw std::invalid_argument("cat_cols: tensors of different dtypes or row counts");
    }
    cols += p.size(1);
  }
  const size_t es = dtype_size(first.dtype());
  Tensor out = Tensor::empty({rows, cols}, first.dtype());
  auto* dst = static_cast<uint8_t*>(out.data_ptr());
  for (int64_t r = 0; r < rows; ++r) {
    for (const Tensor& p : parts) {
      const size_t row_bytes = size_t(p.size(1)) * es;
      std::memcpy(dst, static_cast<const uint8_t*>(p.data_ptr()) + size_t(r) * row_bytes,
                  row_bytes);
      dst += row_bytes;
    }
  }
  return out;
}

}  // namespace ps
