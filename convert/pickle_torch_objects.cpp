// What torch.save's pickles mean, for the pickle machine (pickle_machine_internal.h): persistent
// ids that name storages, tensor views rebuilt over them, the globals that wrap parameters and
// type-tag dicts, and OrderedDicts. Split from convert_pickle.cpp, which runs the opcodes and
// knows nothing of torch.
#include <cstring>
#include <string>
#include <vector>

#include "convert/pickle_machine_internal.h"

namespace ps {
namespace pickle_detail {

// ('storage', torch.FloatStorage, key, location, numel): the record data/<key>.
Obj Machine::persistent(const Obj& pid) {
  const auto& f = pid->items;
  if (pid->kind != PyObj::Kind::kTuple || f.size() < 5 || f[0]->s != "storage" ||
      f[1]->kind != PyObj::Kind::kGlobal || f[2]->kind != PyObj::Kind::kStr ||
      f[4]->kind != PyObj::Kind::kInt) {
    fail("unsupported persistent id in data.pkl (expected a torch storage)");
  }
  const std::string& key = f[2]->s;
  if (auto it = storages_.find(key); it != storages_.end()) return it->second;
  if (f[4]->i < 0) fail("storage " + key + " has a negative size");
  Obj o = make(PyObj::Kind::kStorage);
  o->tensor = load_(key, f[1]->s, f[4]->i);
  storages_[key] = o;
  return o;
}

std::vector<int64_t> Machine::ints(const Obj& o, const char* what) {
  if (o->kind != PyObj::Kind::kTuple) fail(std::string("tensor ") + what + " is not a tuple");
  std::vector<int64_t> v;
  for (const Obj& e : o->items) {
    if (e->kind != PyObj::Kind::kInt) fail(std::string("tensor ") + what + " holds a non-integer");
    v.push_back(e->i);
  }
  return v;
}

Obj Machine::rebuild_tensor(const Obj& args) {
  const auto& a = args->items;
  if (a.size() < 4 || a[0]->kind != PyObj::Kind::kStorage || a[1]->kind != PyObj::Kind::kInt) {
    fail("malformed torch._utils._rebuild_tensor_v2 arguments");
  }
  const Tensor& storage = a[0]->tensor;
  const std::vector<int64_t> size = ints(a[2], "size");
  const std::vector<int64_t> stride = ints(a[3], "stride");
  const int64_t offset = a[1]->i;
  if (size.size() != stride.size()) fail("tensor size and stride differ in length");
  // The furthest element the view reaches must lie inside the storage.
  int64_t last = offset;
  bool empty = false;
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] < 0 || stride[d] < 0) fail("tensor with a negative size or stride");
    if (size[d] == 0) empty = true;
    last += (size[d] - 1) * stride[d];
  }
  if (offset < 0 || (!empty && last >= storage.numel())) {
    fail("tensor view reaches past the end of its storage");
  }
  Obj o = make(PyObj::Kind::kTensor);
  o->tensor =
      empty ? Tensor::empty(size, storage.dtype()) : strided_copy(storage, size, stride, offset);
  return o;
}

Obj Machine::reduce(const Obj& fn, const Obj& args) {
  const std::string name = fn->kind == PyObj::Kind::kGlobal ? fn->s : "?";
  if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") {
    return rebuild_tensor(args);
  }
  // restore_type_tag(value, "Dict[str, Tensor]"): libtorch's pickle_save types its dicts.
  if (name == "torch._utils._rebuild_parameter" ||
      name == "torch._utils._rebuild_parameter_with_state" ||
      name == "torch.jit._pickle.restore_type_tag") {
    if (args->items.empty()) fail("malformed " + name + " arguments");
    return args->items[0];
  }
  if (name == "collections.OrderedDict" || name == "builtins.dict") {
    Obj d = make(PyObj::Kind::kDict);
    // OrderedDict([(k, v), ...]) as older picklers write it.
    if (!args->items.empty() && args->items[0]->kind == PyObj::Kind::kList) {
      for (const Obj& kv : args->items[0]->items) {
        if (kv->items.size() == 2) d->dict.emplace_back(kv->items[0], kv->items[1]);
      }
    }
    return d;
  }
  return make_str(PyObj::Kind::kOpaque, name);
}

}  // namespace pickle_detail

Tensor strided_copy(const Tensor& storage, const std::vector<int64_t>& size,
                    const std::vector<int64_t>& stride, int64_t offset) {
  // A contiguous view of the whole storage shares it (tied weights stay tied), as torch's
  // .contiguous() returns the same tensor.
  int64_t numel = 1, expect = 1;
  bool contiguous = true;
  for (size_t d = size.size(); d-- > 0;) {
    if (size[d] != 1 && stride[d] != expect) contiguous = false;
    expect *= size[d];
    numel *= size[d];
  }
  if (contiguous && offset == 0 && numel == storage.numel()) return storage.reshape(size);
  Tensor out = Tensor::empty(size, storage.dtype());
  const size_t es = dtype_size(storage.dtype());
  const auto* src = static_cast<const uint8_t*>(storage.data_ptr());
  auto* dst = static_cast<uint8_t*>(out.data_ptr());
  std::vector<int64_t> index(size.size(), 0);
  for (int64_t n = 0; n < numel; ++n) {
    int64_t at = offset;
    for (size_t d = 0; d < size.size(); ++d) at += index[d] * stride[d];
    std::memcpy(dst + size_t(n) * es, src + size_t(at) * es, es);
    for (size_t d = size.size(); d-- > 0;) {
      if (++index[d] < size[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace ps
