#include "convert/convert_pth_reader.h"

#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>

#include "convert/convert_pickle.h"
#include "convert/zip_archive.h"

namespace ps {
namespace {

DType storage_dtype(const std::string& global) {
  static const std::map<std::string, DType> types = {
      {"torch.FloatStorage", DType::f32}, {"torch.DoubleStorage", DType::f64},
      {"torch.HalfStorage", DType::f16},  {"torch.BFloat16Storage", DType::bf16},
      {"torch.LongStorage", DType::i64},  {"torch.IntStorage", DType::i32},
      {"torch.ShortStorage", DType::i16}, {"torch.CharStorage", DType::i8},
      {"torch.ByteStorage", DType::u8},   {"torch.BoolStorage", DType::boolean}};
  const auto it = types.find(global);
  if (it == types.end())
    throw std::runtime_error("unsupported storage type " + global +
                             " (floating point and integer storages are)");
  return it->second;
}

// The record data/<key> as a flat tensor of `numel` elements of the storage class's dtype.
Tensor load_storage(const ZipArchive& zip, const std::string& path, const std::string& key,
                    const std::string& type, int64_t numel) {
  const DType dtype = storage_dtype(type);
  const std::string record = "data/" + key;
  if (!zip.has(record)) {
    throw std::runtime_error(path + ": record " + record + " is missing from the archive");
  }
  const std::span<const uint8_t> bytes = zip.read(record);
  // Sizes checked before allocating, so a corrupt numel cannot ask for unbounded memory.
  if (numel < 0) throw std::runtime_error(path + ": record " + record + " has a negative size");
  const uint64_t need = static_cast<uint64_t>(numel) * dtype_size(dtype);
  if (bytes.size() < need) {
    throw std::runtime_error(path + ": record " + record + " holds " +
                             std::to_string(bytes.size()) + " bytes, the storage needs " +
                             std::to_string(need));
  }
  Tensor t = Tensor::empty({numel}, dtype);
  if (t.nbytes() > 0) std::memcpy(t.data_ptr(), bytes.data(), t.nbytes());
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
  const ZipArchive zip(path);
  if (!zip.has("data.pkl")) {
    throw std::runtime_error(path +
                             ": the archive has no data.pkl (is it a TorchScript model? "
                             "save model.state_dict() with torch.save instead)");
  }
  const std::span<const uint8_t> pkl = zip.read("data.pkl");
  Obj root = run_torch_pickle(reinterpret_cast<const char*>(pkl.data()), pkl.size(), path,
                              [&](const std::string& key, const std::string& type, int64_t numel) {
                                return load_storage(zip, path, key, type, numel);
                              });

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

}  // namespace ps
