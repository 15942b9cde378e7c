// A restricted pickle reader for torch.save'd state dicts. It executes nothing: only the
// opcodes a (Ordered)dict of tensors uses are accepted, the only callables are
// collections.OrderedDict and torch._utils._rebuild_tensor_v2/_rebuild_parameter, and
// storages stay descriptors (key, dtype, numel) that the caller materialises.
// A second mode scans a TorchScript pickle (LibTorch's checkpoints) for what it declares
// about tensors, leaving its objects opaque.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hamgan::pickle {

struct Value;
using ValuePtr = std::shared_ptr<Value>;

// A tensor view into a storage that is read later (legacy: after the pickle; zip: a record).
struct TensorRef {
  std::string storage_key;
  torch::ScalarType dtype = torch::kFloat;
  int64_t storage_numel = 0;  // elements in the storage, from the persistent id
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
};

struct Value {
  enum Kind { None, Bool, Int, BigInt, Float, String, Tuple, List, Dict, Global, Storage, Tensor, Mark, Object };
  Kind kind = None;
  int64_t i = 0;           // Bool, Int
  double f = 0;            // Float
  std::string s;           // String; BigInt: little-endian two's-complement bytes; Global: "module name"
  std::vector<ValuePtr> items;                          // Tuple, List
  std::vector<std::pair<ValuePtr, ValuePtr>> entries;  // Dict (insertion order)
  TensorRef tensor;        // Storage (storage fields only), Tensor
  // Containers are sealed once placed inside another, so no cycles can form; depth bounds nesting.
  bool sealed = false;
  int depth = 0;
};

const char* kind_name(Value::Kind k);

// Parses one pickle from data[pos, n); on return pos is just past STOP. `what` names the
// source in errors. Any opcode, global or structure outside the accepted subset is an error.
ValuePtr load(const uint8_t* data, size_t n, size_t& pos, const std::string& what);

// What a TorchScript pickle (data.pkl of torch.jit.save and of LibTorch's serialize::
// OutputArchive: module objects, their attribute dicts, lists) declares about tensors. Any
// class may be named and built, but stays opaque: nothing is called, container contents are
// dropped, and only persistent storage ids and _rebuild_tensor_v2 calls are read. Memory is
// bounded whatever the pickle's length: at most kMaxScanValues values and memo entries.
struct TensorScan {
  std::vector<TensorRef> storages;  // each persistent storage id, in order (storage fields only)
  std::vector<TensorRef> tensors;   // each _rebuild_tensor_v2, in order
};
// data.pkl makes about 30 values a tensor, so this leaves room for ~30,000 tensors; a
// checkpoint (G, D, EMA G, Adam's two moments) holds well under 10,000. A value costs ~250
// bytes: a scan stays under ~300 MB whatever it reads.
constexpr size_t kMaxScanValues = size_t(1) << 20;
TensorScan scan_tensors(const uint8_t* data, size_t n, const std::string& what);

}  // namespace hamgan::pickle
