#pragma once
// The pickle machine behind run_torch_pickle() (convert_pickle.h), shared by its two files:
// convert_pickle.cpp runs the opcodes (the stack, the memo, the byte reading) and
// pickle_torch_objects.cpp gives meaning to what torch.save pickles (storages, tensor views,
// parameters, OrderedDicts). Internal to convert/: include convert_pickle.h instead.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "convert/convert_pickle.h"

namespace ps::pickle_detail {

inline Obj make(PyObj::Kind k) {
  auto o = std::make_shared<PyObj>();
  o->kind = k;
  return o;
}
inline Obj make_str(PyObj::Kind k, std::string s) {
  Obj o = make(k);
  o->s = std::move(s);
  return o;
}

class Machine {
 public:
  Machine(const std::string& origin, const StorageLoader& load) : origin_(origin), load_(load) {}

  Obj run(const char* data, size_t size);

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw std::runtime_error(origin_ + ": " + message);
  }
  // Reading data.pkl and the stack (convert_pickle.cpp).
  const uint8_t* take(uint64_t n);
  uint8_t u8();
  uint64_t le(int n);
  std::string bytes(uint64_t n);
  std::string line();
  int64_t long_int(uint64_t n);
  Obj integer(int64_t v);
  Obj binfloat();
  void push(Obj o);
  Obj& top();
  Obj pop();
  std::vector<Obj> pop_n(size_t n);
  std::vector<Obj> pop_mark();
  Obj memo(uint64_t k);
  static Obj tuple(std::vector<Obj> items);

  // torch.save's objects (pickle_torch_objects.cpp).
  Obj persistent(const Obj& pid);
  std::vector<int64_t> ints(const Obj& o, const char* what);
  Obj rebuild_tensor(const Obj& args);
  Obj reduce(const Obj& fn, const Obj& args);

  std::string origin_;
  const StorageLoader& load_;
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  std::vector<Obj> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Obj> memo_;
  std::unordered_map<std::string, Obj> storages_;
};

}  // namespace ps::pickle_detail
