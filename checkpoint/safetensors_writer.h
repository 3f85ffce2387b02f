#pragma once
// Writes the safetensors format (see safetensors_reader.h). Torch-free: callers hand raw
// little-endian bytes, so tests can also craft files tensor by tensor.
#include <cstdint>
#include <map>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/safetensors_reader.h"

namespace ps {

struct SafetensorsEntry {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::kF32;
  std::vector<int64_t> shape;
  std::span<const uint8_t> data;  // numel * dtype_size bytes; must outlive the write call
};

// The header JSON (data_offsets laid out in entry order), padded with spaces to a multiple of 8
// bytes so the data that follows starts aligned. Throws std::invalid_argument when an entry's
// data size does not match its shape or a name repeats.
std::string safetensors_header_json(const std::vector<SafetensorsEntry>& entries,
                                    const std::map<std::string, std::string>& metadata);

// Header length, header, then each entry's bytes.
void write_safetensors(std::ostream& out, const std::vector<SafetensorsEntry>& entries,
                       const std::map<std::string, std::string>& metadata = {});

// Writes `path` through a temporary file renamed into place, so a reader never sees half a file.
// Throws std::runtime_error naming the path on I/O failure.
void write_safetensors_file(const std::string& path, const std::vector<SafetensorsEntry>& entries,
                            const std::map<std::string, std::string>& metadata = {});

}  // namespace ps
