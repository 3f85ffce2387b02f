#pragma once
// A small pickle machine for what torch.save writes (protocol 2: dicts, OrderedDicts, tuples,
// tensors rebuilt from storages), used by convert_pth_reader. Torch-free.
//
// libtorch's own torch::pickle_load cannot be used: it turns collections.OrderedDict (which every
// nn.Module.state_dict() is) into None and rejects nn.Parameter. This machine knows the handful of
// globals torch.save emits and keeps every other class as an opaque object, reported by name only
// if the caller needs its value.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/tensor.h"

namespace ps {

// One Python value as the pickle machine sees it. Only what a state_dict needs is modelled;
// everything else becomes kOpaque with its class name, so errors can say what was found.
struct PyObj;
using Obj = std::shared_ptr<PyObj>;

struct PyObj {
  enum class Kind {
    kNone,
    kBool,
    kInt,
    kFloat,
    kStr,
    kBytes,
    kTuple,
    kList,
    kDict,
    kGlobal,
    kStorage,
    kTensor,
    kOpaque
  };
  Kind kind = Kind::kNone;
  int64_t i = 0;
  double f = 0;
  std::string s;  // str, bytes, "module.name" of a global, class of an opaque object
  std::vector<Obj> items;
  std::vector<std::pair<Obj, Obj>> dict;
  Tensor tensor;  // kStorage: the flat storage; kTensor: the rebuilt view
};

// "a dict", "a torch.nn.modules.linear.Linear object", ...: for error messages.
std::string describe(const Obj& o);

// The flat storage `key` of the given class ("torch.FloatStorage", ...) holding `numel` elements.
using StorageLoader =
    std::function<Tensor(const std::string& key, const std::string& type, int64_t numel)>;

// The elements of a torch view (size, stride, offset) of `storage`, contiguous: the storage
// itself, reshaped, when the view covers it whole in order (so tied weights stay shared), else a
// copy. The caller has checked that the view stays inside the storage.
Tensor strided_copy(const Tensor& storage, const std::vector<int64_t>& size,
                    const std::vector<int64_t>& stride, int64_t offset);

// Runs data.pkl and returns the value it builds. Tensor views are checked against their storage
// and copied contiguous (views of one storage keep sharing it when they cover it whole). Throws
// std::runtime_error prefixed with `origin` on malformed input; never reads outside `data`.
Obj run_torch_pickle(const char* data, size_t size, const std::string& origin,
                     const StorageLoader& load);

}  // namespace ps
