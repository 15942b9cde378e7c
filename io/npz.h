// numpy .npz archives of float arrays (pytorch-fid's reference statistics: keys `mu`, `sigma`).
// Reading accepts stored and deflate-compressed members and zip64 extras (np.savez writes them);
// every size and offset is checked against the file. Writing produces stored members.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hamgan::npz {

// Arrays by name (without ".npy"), as float64 tensors (f4/f8/f2 little-endian, C or Fortran order).
std::map<std::string, torch::Tensor> read_bytes(const std::vector<uint8_t>& bytes, const std::string& what);
std::map<std::string, torch::Tensor> read(const std::string& path);
// Writes float64 arrays; a name is stored as "<name>.npy". An existing `path` is replaced only
// when it is an .npz (io/output_path.h), atomically.
void write(const std::string& path, const std::map<std::string, torch::Tensor>& arrays);

}  // namespace hamgan::npz
