#include "convert/convert_pth_reader.h"

#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>

#include "convert/convert_pickle.h"

namespace ps {
namespace {

at::ScalarType storage_dtype(const std::string& global) {
  static const std::map<std::string, at::ScalarType> types = {
      {"torch.FloatStorage", at::kFloat}, {"torch.DoubleStorage", at::kDouble},
      {"torch.HalfStorage", at::kHalf},   {"torch.BFloat16Storage", at::kBFloat16},
      {"torch.LongStorage", at::kLong},   {"torch.IntStorage", at::kInt},
      {"torch.ShortStorage", at::kShort}, {"torch.CharStorage", at::kChar},
      {"torch.ByteStorage", at::kByte},   {"torch.BoolStorage", at::kBool}};
  const auto it = types.find(global);
  if (it == types.end())
    throw std::runtime_error("unsupported storage type " + global +
                             " (floating point and integer storages are)");
  return it->second;
}

// The record data/<key> as a flat tensor of `numel` elements of the storage class's dtype.
at::Tensor load_storage(caffe2::serialize::PyTorchStreamReader& zip, const std::string& path,
                        const std::string& key, const std::string& type, int64_t numel) {
  const at::ScalarType dtype = storage_dtype(type);
  const std::string record = "data/" + key;
  if (!zip.hasRecord(record)) {
    throw std::runtime_error(path + ": record " + record + " is missing from the archive");
  }
  auto [ptr, size] = zip.getRecord(record);
  // Sizes checked before allocating, so a corrupt numel cannot ask for unbounded memory.
  const uint64_t need = static_cast<uint64_t>(numel) * c10::elementSize(dtype);
  if (size < need) {
    throw std::runtime_error(path + ": record " + record + " holds " + std::to_string(size) +
                             " bytes, the storage needs " + std::to_string(need));
  }
  at::Tensor t = at::empty({numel}, at::TensorOptions().dtype(dtype));
  if (t.nbytes() > 0) std::memcpy(t.data_ptr(), ptr.get(), t.nbytes());
  return t;
}

const Obj* dict_get(const Obj& d, const std::string& key) {
  for (const auto& [k, v] : d->dict) {
    if (k->kind == PyObj::Kind::kStr && k->s == key) return &v;
  }
  return nullptr;
}

}  // namespace

NamedTensors read_torch_state_dict(const std::string& path) {
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open");
    char magic[2] = {};
    in.read(magic, 2);
    if (static_cast<uint8_t>(magic[0]) == 0x80) {
      throw std::runtime_error(
          path +
          ": legacy (pre-1.6) torch.save format; load it in Python and "
          "save again with torch.save(state_dict, path) to get the zip format");
    }
    if (magic[0] != 'P' || magic[1] != 'K') {
      throw std::runtime_error(path +
                               ": not a torch.save file (expected a zip archive holding "
                               "data.pkl)");
    }
  }
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> zip;
  try {
    zip = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path +
                             ": not a readable torch.save archive: " + e.what_without_backtrace());
  }
  if (!zip->hasRecord("data.pkl")) {
    throw std::runtime_error(path +
                             ": the archive has no data.pkl (is it a TorchScript model? "
                             "save model.state_dict() with torch.save instead)");
  }
  Obj root;
  try {
    auto [pkl, size] = zip->getRecord("data.pkl");
    root = run_torch_pickle(static_cast<const char*>(pkl.get()), size, path,
                            [&](const std::string& key, const std::string& type, int64_t numel) {
                              return load_storage(*zip, path, key, type, numel);
                            });
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": " + e.what_without_backtrace());
  }

  if (root->kind != PyObj::Kind::kDict) {
    throw std::runtime_error(path + ": holds " + describe(root) +
                             ", not a state_dict; save model.state_dict() (a dict of name -> "
                             "tensor) with torch.save");
  }
  std::string where;
  for (const char* wrapper : {"model", "state_dict"}) {
    const Obj* inner = dict_get(root, wrapper);
    if (inner != nullptr && (*inner)->kind == PyObj::Kind::kDict) {
      root = *inner;
      where = std::string("[\"") + wrapper + "\"]";
      break;
    }
  }
  NamedTensors out;
  for (const auto& [k, v] : root->dict) {
    if (k->kind != PyObj::Kind::kStr) {
      throw std::runtime_error(path + ": state_dict" + where + " has a key that is " + describe(k) +
                               ", not a tensor name");
    }
    if (v->kind != PyObj::Kind::kTensor) {
      throw std::runtime_error(path + ": state_dict" + where + " entry '" + k->s + "' is " +
                               describe(v) + ", not a tensor");
    }
    out.emplace_back(k->s, v->tensor);
  }
  if (out.empty()) throw std::runtime_error(path + ": the state_dict" + where + " is empty");
  return out;
}

void write_torch_state_dict(const std::string& path, const NamedTensors& tensors) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [name, t] : tensors) dict.insert(name, t.contiguous());
  const std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(dict));
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) throw std::runtime_error(tmp + ": cannot write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error(path + ": cannot rename " + tmp + " into place");
  }
}

}  // namespace ps
