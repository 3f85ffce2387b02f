#include "checkpoint/safetensors_writer.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace ps {

std::string safetensors_header_json(const std::vector<SafetensorsEntry>& entries,
                                    const std::map<std::string, std::string>& metadata) {
  // ordered_json keeps the entry order, so the header reads in the same order as the data.
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!metadata.empty()) j["__metadata__"] = metadata;
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (const SafetensorsEntry& e : entries) {
    if (e.name == "__metadata__" || !seen.insert(e.name).second) {
      throw std::invalid_argument("safetensors: duplicate or reserved tensor name '" + e.name +
                                  "'");
    }
    uint64_t numel = 1;
    for (int64_t d : e.shape) {
      if (d < 0) throw std::invalid_argument("safetensors: negative dimension in '" + e.name + "'");
      numel *= static_cast<uint64_t>(d);
    }
    if (numel * dtype_size(e.dtype) != e.data.size()) {
      throw std::invalid_argument("safetensors: tensor '" + e.name + "' has " +
                                  std::to_string(e.data.size()) + " bytes but its shape needs " +
                                  std::to_string(numel * dtype_size(e.dtype)));
    }
    j[e.name] = {{"dtype", dtype_name(e.dtype)},
                 {"shape", e.shape},
                 {"data_offsets", {offset, offset + e.data.size()}}};
    offset += e.data.size();
  }
  std::string text = j.dump();
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');
  return text;
}

void write_safetensors(std::ostream& out, const std::vector<SafetensorsEntry>& entries,
                       const std::map<std::string, std::string>& metadata) {
  const std::string header = safetensors_header_json(entries, metadata);
  uint64_t len = header.size();
  unsigned char len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<unsigned char>(len >> (8 * i));
  out.write(reinterpret_cast<const char*>(len_bytes), 8);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (const SafetensorsEntry& e : entries) {
    out.write(reinterpret_cast<const char*>(e.data.data()),
              static_cast<std::streamsize>(e.data.size()));
  }
}

void write_safetensors_file(const std::string& path, const std::vector<SafetensorsEntry>& entries,
                            const std::map<std::string, std::string>& metadata) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot open for writing");
    write_safetensors(out, entries, metadata);
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": write failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename temporary file: " + ec.message());
  }
}

}  // namespace ps
