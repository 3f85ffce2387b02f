#pragma once
// The serving path's tensor: an owned (or borrowed, with its owner kept alive) contiguous
// buffer with a dtype and a shape. It replaces libtorch's at::Tensor on the serve path, which
// used it only as a container: the pagedserve binary links no libtorch (issue #32). It does no
// math beyond what loading and packing weights needs (dtype conversion, row/column
// concatenation); the kernels read its data through raw pointers.
//
// Copies are shallow, like at::Tensor's: two Tensors can share one buffer (tied embeddings).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ps {

enum class DType : uint8_t { f32, bf16, f16, f64, i64, i32, i16, i8, u8, boolean };

size_t dtype_size(DType t);
const char* dtype_name(DType t);  // "float32", "bfloat16", ...

class Tensor {
 public:
  Tensor() = default;

  // Uninitialised storage of `shape` (64-byte aligned); zeros() fills it with zero bytes.
  static Tensor empty(std::vector<int64_t> shape, DType dtype);
  static Tensor zeros(std::vector<int64_t> shape, DType dtype);
  // A view of memory someone else owns; `owner` is held as long as any copy of the view lives
  // (a mapped checkpoint file, an mmap'd pool, a torch tensor in tests).
  static Tensor view(void* data, std::vector<int64_t> shape, DType dtype,
                     std::shared_ptr<const void> owner);
  // A copy of `values` as a 1-D or shaped fp32 tensor.
  static Tensor from_floats(std::span<const float> values, std::vector<int64_t> shape);

  bool defined() const { return defined_; }
  DType dtype() const { return dtype_; }
  int64_t dim() const { return int64_t(shape_.size()); }
  int64_t size(int64_t d) const;  // negative d counts from the end, as in torch
  const std::vector<int64_t>& sizes() const { return shape_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return size_t(numel_) * dtype_size(dtype_); }

  // Shallow-const like at::Tensor: a const Tensor's data can still be written by its owner.
  void* data_ptr() const { return data_; }
  // Typed access; throws std::logic_error when T is not this tensor's dtype.
  template <typename T>
  T* data_ptr() const;

  // This tensor when it already has `t`, else a converted copy (floating formats round to
  // nearest even like torch's .to(); integer and bool tensors convert only to themselves).
  Tensor to(DType t) const;
  // A deep copy (own buffer).
  Tensor clone() const;
  // The same buffer seen with another shape of the same element count.
  Tensor reshape(std::vector<int64_t> shape) const;
  // Rows [begin, begin + count) along dim 0: a view of the same buffer (its owner kept alive),
  // so a fused checkpoint matrix can be split without a copy. Throws std::invalid_argument
  // when the range is outside the tensor.
  Tensor rows(int64_t begin, int64_t count) const;
  // Sets every element to `value` (floating dtypes only).
  void fill(float value);
  // Same buffer, shape and dtype.
  bool is_same(const Tensor& other) const;
  // Element-wise float values, widened to double (any floating dtype): for tests and messages.
  double value_at(int64_t flat_index) const;

 private:
  std::shared_ptr<const void> owner_;
  void* data_ = nullptr;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  DType dtype_ = DType::f32;
  bool defined_ = false;
};

// Tensors of one dtype stacked along dim 0 (matching trailing sizes), or placed side by side
// along dim 1 of 2-D tensors with equal row counts. Throws std::invalid_argument otherwise.
Tensor cat_rows(const std::vector<Tensor>& parts);
Tensor cat_cols(const std::vector<Tensor>& parts);

// "[3, 4]".
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace ps
