#include "io/pickle_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "core/error.h"

namespace hamgan::pickle {

const char* kind_name(Value::Kind k) {
  static const char* names[] = {"None", "bool", "int", "long int", "float", "str", "tuple",
                                "list", "dict", "global", "storage", "tensor", "mark", "object"};
  return names[k];
}

namespace {

constexpr size_t kMaxDepth = 10000;      // stack entries; a state dict needs a handful
constexpr size_t kMaxMemo = 1u << 24;    // memo slots
constexpr int kMaxNesting = 64;

ValuePtr make(Value::Kind k) {
  auto v = std::make_shared<Value>();
  v->kind = k;
  return v;
}

struct StorageType {
  const char* name;
  torch::ScalarType dtype;
};
const StorageType kStorageTypes[] = {
    {"FloatStorage", torch::kFloat},   {"DoubleStorage", torch::kDouble},
    {"HalfStorage", torch::kHalf},     {"BFloat16Storage", torch::kBFloat16},
    {"LongStorage", torch::kLong},     {"IntStorage", torch::kInt},
    {"ShortStorage", torch::kShort},   {"CharStorage", torch::kChar},
    {"ByteStorage", torch::kByte},     {"BoolStorage", torch::kBool}};

class Reader {
 public:
  // scan: null for a state dict (strict); else the TorchScript scan that collects into it.
  Reader(const uint8_t* d, size_t n, size_t pos, const std::string& what, TensorScan* scan = nullptr)
      : d_(d), n_(n), pos_(pos), what_(what), scan_(scan) {}

  ValuePtr run(size_t& end) {
    for (;;) {
      const size_t op_pos = pos_;
      const uint8_t op = u8();
      switch (op) {
        case 0x80: {  // PROTO
          const uint8_t p = u8();
          if (p > 5) bad(op_pos, "unsupported pickle protocol " + std::to_string(p));
          break;
        }
        case '.': {  // STOP
          if (stack_.size() != 1) bad(op_pos, "STOP with " + std::to_string(stack_.size()) + " stack entries, expected 1");
          end = pos_;
          return pop(op_pos);
        }
        case '(': push(make(Value::Mark)); break;  // MARK
        case 'N': push(make(Value::None)); break;
        case 0x88: case 0x89: {  // NEWTRUE / NEWFALSE
          auto v = make(Value::Bool);
          v->i = op == 0x88;
          push(v);
          break;
        }
        case 'J': push_int(static_cast<int32_t>(le(4))); break;  // BININT
        case 'K': push_int(static_cast<int64_t>(le(1))); break;  // BININT1
        case 'M': push_int(static_cast<int64_t>(le(2))); break;  // BININT2
        case 0x8a: {  // LONG1
          const size_t len = u8();
          const std::string b = bytes(len);
          if (len <= 8) {
            uint64_t u = 0;
            for (size_t k = 0; k < len; ++k) u |= static_cast<uint64_t>(static_cast<uint8_t>(b[k])) << (8 * k);
            if (len > 0 && len < 8 && (static_cast<uint8_t>(b[len - 1]) & 0x80)) u |= ~uint64_t(0) << (8 * len);
            push_int(static_cast<int64_t>(u));
          } else {
            auto v = make(Value::BigInt);
            v->s = b;
            push(v);
          }
          break;
        }
        case 'G': {  // BINFLOAT, big-endian double
          uint64_t u = 0;
          for (int k = 0; k < 8; ++k) u = (u << 8) | u8();
          auto v = make(Value::Float);
          std::memcpy(&v->f, &u, 8);
          push(v);
          break;
        }
        case 'X': push_str(bytes(le(4))); break;  // BINUNICODE
        case 0x8c: push_str(bytes(u8())); break;  // SHORT_BINUNICODE
        case 'B': case 'C': {  // BINBYTES / SHORT_BINBYTES (a TorchScript bytes attribute)
          if (!scan_) reject(op_pos, op);
          push_str(bytes(op == 'B' ? le(4) : le(1)));
          break;
        }
        case ')': push(make(Value::Tuple)); break;  // EMPTY_TUPLE
        case ']': push(make(Value::List)); break;   // EMPTY_LIST
        case '}': push(make(Value::Dict)); break;   // EMPTY_DICT
        case 't': {  // TUPLE
          auto v = make(Value::Tuple);
          v->items = pop_mark(op_pos);
          adopt(v, v->items, op_pos);
          push(v);
          break;
        }
        case 0x85: case 0x86: case 0x87: {  // TUPLE1..3
          const size_t k = op - 0x84;
          if (stack_.size() < k + base()) bad(op_pos, "TUPLE" + std::to_string(k) + " on a short stack");
          auto v = make(Value::Tuple);
          v->items.assign(stack_.end() - k, stack_.end());
          for (auto& it : v->items) if (it->kind == Value::Mark) bad(op_pos, "mark inside a tuple");
          stack_.resize(stack_.size() - k);
          adopt(v, v->items, op_pos);
          push(v);
          break;
        }
        // A scan drops what goes into lists and dicts: nothing it reports depends on them, and
        // a pickle that fills a list cannot grow the scan's memory.
        case 'a': {  // APPEND
          ValuePtr x = pop(op_pos);
          auto l = list_at_top(op_pos);
          if (scan_) break;
          adopt(l, {x}, op_pos);
          l->items.push_back(x);
          break;
        }
        case 'e': {  // APPENDS
          auto xs = pop_mark(op_pos);
          auto l = list_at_top(op_pos);
          if (scan_) break;
          adopt(l, xs, op_pos);
          l->items.insert(l->items.end(), xs.begin(), xs.end());
          break;
        }
        case 's': {  // SETITEM
          ValuePtr v = pop(op_pos), k = pop(op_pos);
          auto dct = dict_at_top(op_pos);
          if (scan_) break;
          adopt(dct, {k, v}, op_pos);
          dct->entries.emplace_back(k, v);
          break;
        }
        case 'u': {  // SETITEMS
          auto xs = pop_mark(op_pos);
          if (xs.size() % 2) bad(op_pos, "SETITEMS with an odd number of items");
          auto dct = dict_at_top(op_pos);
          if (scan_) break;
          adopt(dct, xs, op_pos);
          for (size_t k = 0; k < xs.size(); k += 2) dct->entries.emplace_back(xs[k], xs[k + 1]);
          break;
        }
        case 'q': memo_put(le(1), op_pos); break;  // BINPUT
        case 'r': memo_put(le(4), op_pos); break;  // LONG_BINPUT
        case 0x94: memo_put(memo_.size(), op_pos); break;  // MEMOIZE
        case 'h': memo_get(le(1), op_pos); break;  // BINGET
        case 'j': memo_get(le(4), op_pos); break;  // LONG_BINGET
        case 'c': {  // GLOBAL "module\nname\n"
          const std::string mod = line(op_pos), name = line(op_pos);
          push(global(mod, name, op_pos));
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          ValuePtr name = pop(op_pos), mod = pop(op_pos);
          if (name->kind != Value::String || mod->kind != Value::String) bad(op_pos, "STACK_GLOBAL needs two strings");
          push(global(mod->s, name->s, op_pos));
          break;
        }
        case 'Q': {  // BINPERSID
          ValuePtr st = storage(pop(op_pos), op_pos);
          if (scan_) scan_->storages.push_back(st->tensor);
          push(st);
          break;
        }
        case 0x81: {  // NEWOBJ: cls.__new__(cls, *args), TorchScript's module objects
          if (!scan_) reject(op_pos, op);
          ValuePtr args = pop(op_pos), cls = pop(op_pos);
          if (cls->kind != Value::Global || args->kind != Value::Tuple) bad(op_pos, "NEWOBJ needs a class and a tuple");
          push(make(Value::Object));
          break;
        }
        case 'R': {  // REDUCE
          ValuePtr args = pop(op_pos), fn = pop(op_pos);
          push(reduce(fn, args, op_pos));
          break;
        }
        case 'b': {  // BUILD: only OrderedDict's state (its _metadata), or a scanned object's; dropped
          ValuePtr state = pop(op_pos);
          ValuePtr obj = top(op_pos);
          if (scan_ && obj->kind == Value::Object) break;
          if (obj->kind != Value::Dict || (state->kind != Value::Dict && state->kind != Value::None))
            bad(op_pos, "BUILD on a " + std::string(kind_name(obj->kind)) + " (only OrderedDict state is accepted)");
          break;
        }
        default: reject(op_pos, op);
      }
    }
  }

 private:
  [[noreturn]] void bad(size_t at, const std::string& msg) const {
    fail(what_, ": pickle at byte ", at, ": ", msg);
  }
  [[noreturn]] void reject(size_t at, uint8_t op) const {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", op);
    bad(at, std::string("pickle opcode ") + buf + " is not accepted (only the state-dict subset)");
  }
  void need(size_t k) const {
    if (k > n_ - pos_) fail(what_, ": pickle truncated at byte ", pos_, " (", k, " bytes needed, ", n_ - pos_, " left)");
  }
  uint8_t u8() {
    need(1);
    return d_[pos_++];
  }
  uint64_t le(size_t k) {
    need(k);
    uint64_t u = 0;
    for (size_t j = 0; j < k; ++j) u |= static_cast<uint64_t>(d_[pos_ + j]) << (8 * j);
    pos_ += k;
    return u;
  }
  std::string bytes(uint64_t k) {
    need(k);
    std::string s(reinterpret_cast<const char*>(d_ + pos_), k);
    pos_ += k;
    return s;
  }
  std::string line(size_t at) {
    const size_t start = pos_;
    while (pos_ < n_ && d_[pos_] != '\n' && pos_ - start < 256) ++pos_;
    if (pos_ >= n_) fail(what_, ": pickle truncated at byte ", pos_, " (inside a GLOBAL name)");
    if (d_[pos_] != '\n') bad(at, "GLOBAL name longer than 256 bytes");
    std::string s(reinterpret_cast<const char*>(d_ + start), pos_ - start);
    ++pos_;
    return s;
  }
  size_t base() const { return 0; }
  // Places children in a container: the container must not itself be inside another (so no
  // cycles), children become sealed, and nesting stays shallow (a state dict needs ~4 levels).
  void adopt(const ValuePtr& parent, const std::vector<ValuePtr>& children, size_t at) {
    if (parent->sealed) bad(at, "modifying a container that is already inside another");
    for (const auto& c : children) {
      if (c.get() == parent.get()) bad(at, "container inserted into itself");
      c->sealed = true;
      parent->depth = std::max(parent->depth, c->depth + 1);
    }
    if (parent->depth > kMaxNesting) bad(at, "nesting deeper than " + std::to_string(kMaxNesting));
  }
  void push(ValuePtr v) {
    if (stack_.size() >= kMaxDepth) bad(pos_, "stack deeper than " + std::to_string(kMaxDepth));
    count_scanned();
    stack_.push_back(std::move(v));
  }
  // Every value a scan makes is pushed, and every memo entry is put: counting both bounds
  // what the scan holds, however the pickle nests, memoizes or repeats.
  void count_scanned() {
    if (scan_ && ++scanned_ > kMaxScanValues)
      bad(pos_, "more than " + std::to_string(kMaxScanValues) + " values and memo entries (a checkpoint makes about 30 a tensor)");
  }
  void push_int(int64_t x) {
    auto v = make(Value::Int);
    v->i = x;
    push(v);
  }
  void push_str(std::string s) {
    auto v = make(Value::String);
    v->s = std::move(s);
    push(v);
  }
  ValuePtr top(size_t at) {
    if (stack_.empty()) bad(at, "stack underflow");
    if (stack_.back()->kind == Value::Mark) bad(at, "unexpected mark");
    return stack_.back();
  }
  ValuePtr pop(size_t at) {
    ValuePtr v = top(at);
    stack_.pop_back();
    return v;
  }
  std::vector<ValuePtr> pop_mark(size_t at) {
    size_t k = stack_.size();
    while (k > 0 && stack_[k - 1]->kind != Value::Mark) --k;
    if (k == 0) bad(at, "no mark on the stack");
    std::vector<ValuePtr> xs(stack_.begin() + k, stack_.end());
    stack_.resize(k - 1);
    return xs;
  }
  ValuePtr list_at_top(size_t at) {
    ValuePtr l = top(at);
    if (l->kind != Value::List) bad(at, std::string("append to a ") + kind_name(l->kind));
    return l;
  }
  ValuePtr dict_at_top(size_t at) {
    ValuePtr dct = top(at);
    if (dct->kind != Value::Dict) bad(at, std::string("setitem on a ") + kind_name(dct->kind));
    return dct;
  }
  void memo_put(uint64_t idx, size_t at) {
    if (idx >= kMaxMemo) bad(at, "memo index " + std::to_string(idx) + " too large");
    ValuePtr v = top(at);
    auto [it, fresh] = memo_.try_emplace(idx, v);
    if (fresh) count_scanned();
    else it->second = std::move(v);
  }
  void memo_get(uint64_t idx, size_t at) {
    auto it = memo_.find(idx);
    if (it == memo_.end()) bad(at, "memo index " + std::to_string(idx) + " was never stored");
    push(it->second);
  }
  ValuePtr global(const std::string& mod, const std::string& name, size_t at) {
    const std::string full = mod + "." + name;
    bool ok = full == "collections.OrderedDict" || full == "torch._utils._rebuild_tensor_v2" ||
              full == "torch._utils._rebuild_parameter";
    if (mod == "torch")
      for (const auto& st : kStorageTypes) ok = ok || name == st.name;
    // A scan names TorchScript's classes (__torch__.*, torch.jit._pickle.*) but never calls them.
    if (!ok && !scan_) bad(at, "global '" + full + "' is not accepted");
    auto v = make(Value::Global);
    v->s = full;
    return v;
  }
  int64_t as_int(const ValuePtr& v, size_t at, const char* what) {
    if (v->kind != Value::Int) bad(at, std::string(what) + ": expected int, got " + kind_name(v->kind));
    return v->i;
  }
  std::vector<int64_t> int_tuple(const ValuePtr& v, size_t at, const char* what) {
    if (v->kind != Value::Tuple) bad(at, std::string(what) + ": expected a tuple of ints");
    std::vector<int64_t> out;
    for (auto& x : v->items) out.push_back(as_int(x, at, what));
    return out;
  }
  // ('storage', torch.XStorage, key, location, numel[, view_metadata=None])
  ValuePtr storage(const ValuePtr& pid, size_t at) {
    if (pid->kind != Value::Tuple || pid->items.size() < 5 || pid->items.size() > 6)
      bad(at, "persistent id is not a ('storage', type, key, location, numel) tuple");
    const auto& it = pid->items;
    if (it[0]->kind != Value::String || it[0]->s != "storage") bad(at, "persistent id does not start with 'storage'");
    if (it[1]->kind != Value::Global) bad(at, "storage type is not a global");
    if (it[2]->kind != Value::String || it[3]->kind != Value::String) bad(at, "storage key/location are not strings");
    if (pid->items.size() == 6 && it[5]->kind != Value::None) bad(at, "storage views (view_metadata) are not supported");
    auto v = make(Value::Storage);
    bool found = false;
    for (const auto& st : kStorageTypes)
      if (it[1]->s == std::string("torch.") + st.name) {
        v->tensor.dtype = st.dtype;
        found = true;
      }
    if (!found) bad(at, "'" + it[1]->s + "' is not a storage type");
    v->tensor.storage_key = it[2]->s;
    v->tensor.storage_numel = as_int(it[4], at, "storage numel");
    if (v->tensor.storage_numel < 0) bad(at, "negative storage size");
    return v;
  }
  ValuePtr reduce(const ValuePtr& fn, const ValuePtr& args, size_t at) {
    if (fn->kind != Value::Global) bad(at, std::string("REDUCE on a ") + kind_name(fn->kind));
    if (args->kind != Value::Tuple) bad(at, "REDUCE arguments are not a tuple");
    const auto& a = args->items;
    if (fn->s == "collections.OrderedDict") {
      if (!a.empty() && !scan_) bad(at, "OrderedDict() with arguments");
      return make(Value::Dict);
    }
    if (fn->s == "torch._utils._rebuild_parameter") {  // (data, requires_grad, hooks)
      if (a.size() != 3 || a[0]->kind != Value::Tensor) bad(at, "_rebuild_parameter: expected (tensor, bool, hooks)");
      return a[0];
    }
    if (fn->s == "torch._utils._rebuild_tensor_v2") {
      // (storage, offset, size, stride, requires_grad, backward_hooks[, metadata])
      if (a.size() != 6 && a.size() != 7) bad(at, "_rebuild_tensor_v2: expected 6 or 7 arguments, got " + std::to_string(a.size()));
      if (a[0]->kind != Value::Storage) bad(at, "_rebuild_tensor_v2: first argument is not a storage");
      auto v = make(Value::Tensor);
      v->tensor = a[0]->tensor;
      v->tensor.offset = as_int(a[1], at, "storage offset");
      v->tensor.sizes = int_tuple(a[2], at, "size");
      v->tensor.strides = int_tuple(a[3], at, "stride");
      if (v->tensor.sizes.size() != v->tensor.strides.size()) bad(at, "size and stride differ in length");
      if (scan_) scan_->tensors.push_back(v->tensor);
      return v;
    }
    if (scan_) return make(Value::Object);  // named, never called: the scan needs no result
    bad(at, "'" + fn->s + "' cannot be called");
  }

  const uint8_t* d_;
  size_t n_, pos_;
  std::string what_;
  TensorScan* scan_;
  size_t scanned_ = 0;
  std::vector<ValuePtr> stack_;
  std::unordered_map<uint64_t, ValuePtr> memo_;
};

}  // namespace

ValuePtr load(const uint8_t* data, size_t n, size_t& pos, const std::string& what) {
  if (pos > n) fail(what, ": pickle starts past the end (byte ", pos, " of ", n, ")");
  Reader r(data, n, pos, what);
  return r.run(pos);
}

TensorScan scan_tensors(const uint8_t* data, size_t n, const std::string& what) {
  TensorScan out;
  size_t pos = 0;
  Reader r(data, n, pos, what, &out);
  r.run(pos);
  return out;
}

}  // namespace hamgan::pickle
