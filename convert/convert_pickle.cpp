// The pickle opcode machine (pickle_machine_internal.h): the stack, marks, memo and the reading of
// data.pkl, for run_torch_pickle(). What the torch globals it meets mean is
// pickle_torch_objects.cpp's.
#include "convert/convert_pickle.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "convert/pickle_machine_internal.h"

namespace ps {

std::string describe(const Obj& o) {
  switch (o->kind) {
    case PyObj::Kind::kNone:
      return "None";
    case PyObj::Kind::kBool:
      return "a bool";
    case PyObj::Kind::kInt:
      return "an int";
    case PyObj::Kind::kFloat:
      return "a float";
    case PyObj::Kind::kStr:
      return "a str";
    case PyObj::Kind::kBytes:
      return "bytes";
    case PyObj::Kind::kTuple:
      return "a tuple";
    case PyObj::Kind::kList:
      return "a list";
    case PyObj::Kind::kDict:
      return "a dict";
    case PyObj::Kind::kGlobal:
      return "the global " + o->s;
    case PyObj::Kind::kStorage:
      return "a storage";
    case PyObj::Kind::kTensor:
      return "a tensor";
    case PyObj::Kind::kOpaque:
      return "a " + o->s + " object";
  }
  return "?";
}

namespace pickle_detail {

Obj Machine::run(const char* data, size_t size) {
  p_ = reinterpret_cast<const uint8_t*>(data);
  end_ = p_ + size;
  while (true) {
    const uint8_t op = u8();
    switch (op) {
      case 0x80:
        u8();
        break;  // PROTO
      case 0x95:
        take(8);
        break;  // FRAME
      case '.':
        return pop();  // STOP
      case '(':
        marks_.push_back(stack_.size());
        break;
      case '}':
        push(make(PyObj::Kind::kDict));
        break;
      case ']':
        push(make(PyObj::Kind::kList));
        break;
      case ')':
        push(make(PyObj::Kind::kTuple));
        break;
      case 0x8f:
        push(make(PyObj::Kind::kList));
        break;  // EMPTY_SET, modelled as a list
      case 't':
        push(tuple(pop_mark()));
        break;
      case 0x85:
        push(tuple(pop_n(1)));
        break;
      case 0x86:
        push(tuple(pop_n(2)));
        break;
      case 0x87:
        push(tuple(pop_n(3)));
        break;
      case 0x91: {
        Obj l = make(PyObj::Kind::kList);
        l->items = pop_mark();
        push(l);
        break;
      }
      case 'X':
        push(make_str(PyObj::Kind::kStr, bytes(le(4))));
        break;
      case 0x8c:
        push(make_str(PyObj::Kind::kStr, bytes(u8())));
        break;
      case 0x8d:
        push(make_str(PyObj::Kind::kStr, bytes(le(8))));
        break;
      case 'T':
        push(make_str(PyObj::Kind::kStr, bytes(le(4))));
        break;
      case 'U':
        push(make_str(PyObj::Kind::kStr, bytes(u8())));
        break;
      case 'B':
        push(make_str(PyObj::Kind::kBytes, bytes(le(4))));
        break;
      case 'C':
        push(make_str(PyObj::Kind::kBytes, bytes(u8())));
        break;
      case 0x8e:
        push(make_str(PyObj::Kind::kBytes, bytes(le(8))));
        break;
      case 'J':
        push(integer(static_cast<int32_t>(le(4))));
        break;
      case 'K':
        push(integer(u8()));
        break;
      case 'M':
        push(integer(static_cast<int64_t>(le(2))));
        break;
      case 0x8a:
        push(integer(long_int(u8())));
        break;
      case 0x8b:
        push(integer(long_int(le(4))));
        break;
      case 'G':
        push(binfloat());
        break;
      case 'N':
        push(make(PyObj::Kind::kNone));
        break;
      case 0x88:
      case 0x89: {
        Obj b = make(PyObj::Kind::kBool);
        b->i = op == 0x88;
        push(b);
        break;
      }
      case 'c': {
        std::string m = line();
        push(make_str(PyObj::Kind::kGlobal, m + "." + line()));
        break;
      }
      case 0x93: {
        Obj name = pop();
        Obj mod = pop();
        push(make_str(PyObj::Kind::kGlobal, mod->s + "." + name->s));
        break;
      }
      case 'Q':
        push(persistent(pop()));
        break;
      case 'R': {
        Obj args = pop();
        Obj fn = pop();
        push(reduce(fn, args));
        break;
      }
      case 0x81: {
        pop();
        Obj cls = pop();
        push(make_str(PyObj::Kind::kOpaque, cls->s));
        break;
      }
      case 0x92: {
        pop();
        pop();
        Obj cls = pop();
        push(make_str(PyObj::Kind::kOpaque, cls->s));
        break;
      }
      case 'b':
        pop();
        break;  // BUILD: object state (OrderedDict._metadata, ...) is not needed
      case 'q':
        memo_[u8()] = top();
        break;
      case 'r':
        memo_[le(4)] = top();
        break;
      case 0x94:
        memo_[memo_.size()] = top();
        break;
      case 'h':
        push(memo(u8()));
        break;
      case 'j':
        push(memo(le(4)));
        break;
      case 's': {
        Obj v = pop();
        Obj k = pop();
        top()->dict.emplace_back(k, v);
        break;
      }
      case 'u': {
        std::vector<Obj> kv = pop_mark();
        Obj d = top();
        for (size_t i = 0; i + 1 < kv.size(); i += 2) d->dict.emplace_back(kv[i], kv[i + 1]);
        break;
      }
      case 'a': {
        Obj v = pop();
        top()->items.push_back(v);
        break;
      }
      case 'e':
      case 0x90: {
        std::vector<Obj> v = pop_mark();
        Obj l = top();
        l->items.insert(l->items.end(), v.begin(), v.end());
        break;
      }
      case '0':
        pop();
        break;
      case '1':
        pop_mark();
        break;
      case '2':
        push(top());
        break;
      default: {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "unsupported pickle opcode 0x%02x", op);
        fail(buf);
      }
    }
  }
}

const uint8_t* Machine::take(uint64_t n) {
  if (n > static_cast<uint64_t>(end_ - p_)) fail("data.pkl ends in the middle of a value");
  const uint8_t* at = p_;
  p_ += n;
  return at;
}

uint8_t Machine::u8() {
  return *take(1);
}

uint64_t Machine::le(int n) {
  const uint8_t* b = take(static_cast<uint64_t>(n));
  uint64_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = (v << 8) | b[k];
  return v;
}

std::string Machine::bytes(uint64_t n) {
  const uint8_t* b = take(n);
  return std::string(reinterpret_cast<const char*>(b), n);
}

std::string Machine::line() {
  std::string s;
  for (char c; (c = static_cast<char>(u8())) != '\n';) s += c;
  return s;
}

int64_t Machine::long_int(uint64_t n) {
  if (n > 8) fail("integer wider than 64 bits");
  const uint8_t* b = take(n);
  uint64_t v = 0;
  for (uint64_t k = n; k-- > 0;) v = (v << 8) | b[k];
  if (n > 0 && n < 8 && (b[n - 1] & 0x80)) v |= ~uint64_t{0} << (8 * n);  // sign-extend
  return static_cast<int64_t>(v);
}

Obj Machine::integer(int64_t v) {
  Obj o = make(PyObj::Kind::kInt);
  o->i = v;
  return o;
}

Obj Machine::binfloat() {
  uint64_t bits = 0;
  for (const uint8_t *b = take(8), *e = b + 8; b != e; ++b) bits = (bits << 8) | *b;  // big-endian
  Obj o = make(PyObj::Kind::kFloat);
  std::memcpy(&o->f, &bits, 8);
  return o;
}

void Machine::push(Obj o) {
  stack_.push_back(std::move(o));
}

Obj& Machine::top() {
  if (stack_.empty() || (!marks_.empty() && marks_.back() == stack_.size()))
    fail("pickle stack underflow");
  return stack_.back();
}

Obj Machine::pop() {
  Obj o = top();
  stack_.pop_back();
  return o;
}

std::vector<Obj> Machine::pop_n(size_t n) {
  if (stack_.size() < n) fail("pickle stack underflow");
  std::vector<Obj> v(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
  stack_.resize(stack_.size() - n);
  return v;
}

std::vector<Obj> Machine::pop_mark() {
  if (marks_.empty()) fail("pickle MARK missing");
  const size_t m = marks_.back();
  marks_.pop_back();
  return pop_n(stack_.size() - m);
}

Obj Machine::memo(uint64_t k) {
  const auto it = memo_.find(k);
  if (it == memo_.end()) fail("pickle refers to memo entry " + std::to_string(k) + " never stored");
  return it->second;
}

Obj Machine::tuple(std::vector<Obj> items) {
  Obj t = make(PyObj::Kind::kTuple);
  t->items = std::move(items);
  return t;
}

}  // namespace pickle_detail

Obj run_torch_pickle(const char* data, size_t size, const std::string& origin,
                     const StorageLoader& load) {
  return pickle_detail::Machine(origin, load).run(data, size);
}

}  // namespace ps
