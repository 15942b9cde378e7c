#include "io/torch_file.h"

#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/istream_adapter.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "io/mapped_file.h"
#include "io/regular_file.h"

namespace hamgan::torch_file {

namespace {

using pickle::Value;
using pickle::ValuePtr;

// 0x1950a86a20f9469cfc6c, torch.serialization.MAGIC_NUMBER, as LONG1 little-endian bytes.
const unsigned char kMagic[] = {0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
constexpr int64_t kLegacyProtocol = 1001;

bool is_zip(const std::vector<uint8_t>& b) { return b.size() >= 4 && b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4; }

std::string shape_str(const std::vector<int64_t>& s) {
  std::ostringstream os;
  os << "[";
  for (size_t k = 0; k < s.size(); ++k) os << (k ? ", " : "") << s[k];
  os << "]";
  return os.str();
}

// The top-level object must be a dict of str -> tensor.
void collect(const ValuePtr& root, const std::string& what, Index& idx) {
  if (root->kind != Value::Dict) fail(what, ": expected a dict of tensors, found a ", pickle::kind_name(root->kind));
  for (const auto& [k, v] : root->entries) {
    if (k->kind != Value::String) fail(what, ": dict key is a ", pickle::kind_name(k->kind), ", expected str");
    if (v->kind != Value::Tensor) fail(what, ": key '", k->s, "' holds a ", pickle::kind_name(v->kind), ", expected a tensor");
    idx.tensors.emplace_back(k->s, v->tensor);
  }
}

// A strided view must stay inside its storage: offset + sum (size-1)*stride < numel. `who`
// names the tensor in errors. Returns the view's element count.
__int128 check_view(const pickle::TensorRef& r, int64_t numel_storage, const std::string& what, const std::string& who) {
  __int128 last = r.offset, count = 1;  // cannot overflow: at most 64 dims of sizes and strides below 2^40
  if (r.offset < 0) fail(what, ": ", who, ": negative storage offset ", r.offset);
  if (r.sizes.size() > 64) fail(what, ": ", who, ": ", r.sizes.size(), " dimensions");
  for (size_t d = 0; d < r.sizes.size(); ++d) {
    if (r.sizes[d] < 0 || r.strides[d] < 0) fail(what, ": ", who, ": negative size or stride");
    if (r.sizes[d] == 0) count = 0;
    else if (r.sizes[d] > (int64_t(1) << 40) || r.strides[d] > (int64_t(1) << 40))
      fail(what, ": ", who, ": size/stride out of range");
    else last += static_cast<__int128>(r.sizes[d] - 1) * r.strides[d];
    count = std::min<__int128>(count * r.sizes[d], __int128(1) << 80);  // saturates: 64 dims of 2^40
  }
  if (count && last >= numel_storage)
    fail(what, ": ", who, ": shape ", shape_str(r.sizes), " with strides ", shape_str(r.strides),
         " at offset ", r.offset, " reaches past the end of a storage of ", numel_storage, " elements");
  return count;
}

torch::Tensor view(const torch::Tensor& storage, const pickle::TensorRef& r, const std::string& what,
                   const std::string& key) {
  if (!check_view(r, storage.numel(), what, "key '" + key + "'"))
    return torch::empty(r.sizes, torch::TensorOptions().dtype(r.dtype));
  return storage.as_strided(r.sizes, r.strides, r.offset).clone();
}

TensorMap materialise(const Index& idx, const std::map<std::string, torch::Tensor>& storages,
                      const std::string& what) {
  TensorMap out;
  for (const auto& [key, r] : idx.tensors) {
    auto it = storages.find(r.storage_key);
    if (it == storages.end()) fail(what, ": key '", key, "': storage '", r.storage_key, "' is missing");
    if (it->second.scalar_type() != r.dtype) fail(what, ": key '", key, "': storage '", r.storage_key, "' is shared with a different dtype");
    if (out.count(key)) fail(what, ": duplicate key '", key, "'");
    out[key] = view(it->second, r, what, key);
  }
  return out;
}

torch::Tensor storage_from(const uint8_t* p, int64_t numel, torch::ScalarType dt) {
  torch::Tensor t = torch::empty({numel}, torch::TensorOptions().dtype(dt));
  if (numel) std::memcpy(t.data_ptr(), p, static_cast<size_t>(numel) * t.element_size());
  return t;
}

// Legacy: magic, protocol, sys_info, object pickle, storage-key list.
Index legacy_index(const std::vector<uint8_t>& b, const std::string& what, std::vector<std::string>& keys) {
  size_t pos = 0;
  ValuePtr magic = pickle::load(b.data(), b.size(), pos, what);
  if (magic->kind != Value::BigInt || magic->s != std::string(reinterpret_cast<const char*>(kMagic), sizeof kMagic))
    fail(what, ": not a torch.save file (no legacy magic number, and not a zip)");
  ValuePtr proto = pickle::load(b.data(), b.size(), pos, what);
  if (proto->kind != Value::Int || proto->i != kLegacyProtocol)
    fail(what, ": legacy protocol version is not ", kLegacyProtocol);
  ValuePtr sys = pickle::load(b.data(), b.size(), pos, what);
  if (sys->kind != Value::Dict) fail(what, ": sys_info is not a dict");
  for (const auto& [k, v] : sys->entries)
    if (k->kind == Value::String && k->s == "little_endian" && !(v->kind == Value::Bool && v->i))
      fail(what, ": saved on a big-endian machine (unsupported)");
  Index idx;
  idx.format = Index::Legacy;
  collect(pickle::load(b.data(), b.size(), pos, what), what, idx);
  ValuePtr list = pickle::load(b.data(), b.size(), pos, what);
  if (list->kind != Value::List) fail(what, ": storage-key list is a ", pickle::kind_name(list->kind));
  for (const auto& k : list->items) {
    if (k->kind != Value::String) fail(what, ": storage key is not a str");
    keys.push_back(k->s);
  }
  idx.storages_begin = pos;
  return idx;
}

// Each storage's dtype and numel, as the pickle declared them; conflicting declarations are errors.
std::map<std::string, pickle::TensorRef> declared(const Index& idx, const std::string& what) {
  std::map<std::string, pickle::TensorRef> d;
  for (const auto& [key, r] : idx.tensors) {
    auto [it, fresh] = d.emplace(r.storage_key, r);
    if (!fresh && (it->second.dtype != r.dtype || it->second.storage_numel != r.storage_numel))
      fail(what, ": storage '", r.storage_key, "' is declared twice with different type or size");
  }
  return d;
}

TensorMap zip_load(const std::vector<uint8_t>& b, const std::string& what, Index* index_only) {
  std::string s(reinterpret_cast<const char*>(b.data()), b.size());
  std::istringstream in(s);
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> zr;
  try {
    zr = std::make_unique<caffe2::serialize::PyTorchStreamReader>(&in);
  } catch (const std::exception& e) {
    fail(what, ": not a readable torch zip archive: ", std::string(e.what()).substr(0, 300));
  }
  if (!zr->hasRecord("data.pkl")) fail(what, ": zip archive has no data.pkl (not a torch.save file)");
  auto [pkl, pkl_n] = zr->getRecord("data.pkl");
  size_t pos = 0;
  Index idx;
  idx.format = Index::Zip;
  collect(pickle::load(static_cast<const uint8_t*>(pkl.get()), pkl_n, pos, what + ":data.pkl"), what, idx);
  if (index_only) {
    *index_only = idx;
    return {};
  }
  std::map<std::string, torch::Tensor> storages;
  for (const auto& [key, r] : declared(idx, what)) {
    const std::string rec = "data/" + key;
    if (!zr->hasRecord(rec)) fail(what, ": storage record '", rec, "' is missing");
    auto [data, n] = zr->getRecord(rec);
    const size_t es = c10::elementSize(r.dtype);
    if (n != static_cast<size_t>(r.storage_numel) * es)
      fail(what, ": storage record '", rec, "' holds ", n, " bytes, expected ", r.storage_numel, " x ", es);
    storages[key] = storage_from(static_cast<const uint8_t*>(data.get()), r.storage_numel, r.dtype);
  }
  return materialise(idx, storages, what);
}

}  // namespace

std::vector<uint8_t> read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, ": is a directory; expected a file");
  io::require_regular_file(path, "a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": cannot open");
  in.seekg(0, std::ios::end);
  const std::streamoff n = in.tellg();
  in.seekg(0);
  std::vector<uint8_t> b(static_cast<size_t>(n));
  if (n && !in.read(reinterpret_cast<char*>(b.data()), n)) fail(path, ": read failed");
  return b;
}

Index read_index(const std::vector<uint8_t>& b, const std::string& what) {
  if (is_zip(b)) {
    Index idx;
    zip_load(b, what, &idx);
    return idx;
  }
  std::vector<std::string> keys;
  return legacy_index(b, what, keys);
}

TensorMap load_legacy(const std::vector<uint8_t>& b, const std::string& what) {
  std::vector<std::string> keys;
  const Index idx = legacy_index(b, what, keys);
  const auto decl = declared(idx, what);
  std::map<std::string, torch::Tensor> storages;
  size_t pos = idx.storages_begin;
  for (const std::string& key : keys) {
    auto it = decl.find(key);
    if (it == decl.end()) fail(what, ": storage '", key, "' is listed but no tensor uses it");
    if (storages.count(key)) fail(what, ": storage '", key, "' is listed twice");
    const auto& r = it->second;
    if (b.size() - pos < 8)
      fail(what, ": truncated: storage '", key, "' size field at byte ", pos, " needs 8 bytes, found ", b.size() - pos);
    int64_t numel = 0;
    std::memcpy(&numel, b.data() + pos, 8);
    pos += 8;
    if (numel != r.storage_numel)
      fail(what, ": storage '", key, "' holds ", numel, " elements, the pickle declared ", r.storage_numel);
    const size_t es = c10::elementSize(r.dtype);
    const uint64_t need = static_cast<uint64_t>(numel) * es;
    if (static_cast<uint64_t>(numel) > (uint64_t(1) << 40) || b.size() - pos < need)
      fail(what, ": truncated: storage '", key, "' (", c10::toString(r.dtype), ", ", numel,
           " elements) at byte ", pos, " needs ", need, " bytes, found ", b.size() - pos);
    storages[key] = storage_from(b.data() + pos, numel, r.dtype);
    pos += need;
  }
  if (pos != b.size()) fail(what, ": ", b.size() - pos, " unexpected bytes after the last storage");
  return materialise(idx, storages, what);
}

TensorMap load_bytes(const std::vector<uint8_t>& b, const std::string& what) {
  return is_zip(b) ? zip_load(b, what, nullptr) : load_legacy(b, what);
}

TensorMap load(const std::string& path) { return load_bytes(read_file(path), path); }

uint64_t verify_script_archive(const std::string& path, const io::ZipLimits& limits) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, ": expected a file");
  const MappedFile file(path, /*writable=*/false);
  return verify_script_archive(file.data(), file.size(), path, limits);
}

uint64_t verify_script_archive(const uint8_t* bytes, size_t size, const std::string& path, const io::ZipLimits& limits) {
  std::map<std::string, uint64_t> sizes;  // member -> bytes (inflated)
  std::vector<std::pair<std::string, pickle::TensorScan>> pickles;
  io::for_each_zip_member(bytes, size, path, limits, [&](const std::string& name, const uint8_t* p, size_t n) {
    // LibTorch looks members up by name: a second one of a name could be read instead of the one checked.
    if (!sizes.emplace(name, n).second) fail(path, ": member '", name, "' appears twice");
    const std::string base = name.substr(name.rfind('/') + 1);
    if (base == "data.pkl" || base == "constants.pkl")
      pickles.emplace_back(name, pickle::scan_tensors(p, n, path + ":" + name));
  });
  for (const auto& [pkl, scan] : pickles) {
    const std::string where = path + ":" + pkl;
    const std::string dir = pkl.substr(0, pkl.size() - 4) + "/";  // LibTorch: data.pkl's storage k is data/k
    std::set<std::string> declared;
    for (const auto& st : scan.storages) {
      // The writer declares each storage once and refers back to it; LibTorch reads a record
      // again for each declaration, so one record declared a million times is a million copies.
      if (!declared.insert(st.storage_key).second)
        fail(where, ": storage '", st.storage_key, "' is declared twice (a writer declares each storage once)");
      if (st.storage_numel == 0) continue;  // LibTorch reads no record for an empty storage
      const std::string rec = dir + st.storage_key;
      const uint64_t es = c10::elementSize(st.dtype), numel = static_cast<uint64_t>(st.storage_numel);
      const auto it = sizes.find(rec);
      if (it == sizes.end())
        fail(where, ": storage '", st.storage_key, "' (", numel, " elements of ", c10::toString(st.dtype),
             ") has no record '", rec, "'");
      if (numel > it->second / es || numel * es != it->second)
        fail(where, ": storage '", st.storage_key, "' declares ", numel, " elements of ", c10::toString(st.dtype),
             " (", es, " bytes each) but its record '", rec, "' holds ", it->second, " bytes");
    }
    for (size_t k = 0; k < scan.tensors.size(); ++k) {
      const pickle::TensorRef& t = scan.tensors[k];
      const std::string who = "tensor " + std::to_string(k) + " (storage record '" + dir + t.storage_key + "')";
      // A saved parameter, buffer or Adam moment is never an expanded view: one with more
      // elements than its storage would have loading allocate what the file does not hold.
      if (check_view(t, t.storage_numel, where, who) > t.storage_numel)
        fail(where, ": ", who, ": shape ", shape_str(t.sizes), " with strides ", shape_str(t.strides),
             " has more elements than its storage of ", t.storage_numel);
    }
  }
  return sizes.size();
}

}  // namespace hamgan::torch_file
