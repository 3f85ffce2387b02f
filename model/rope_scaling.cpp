#include "model/rope_scaling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "model/config_json.h"
#include "model/model_config.h"

namespace ps {
namespace {

using json = nlohmann::json;

constexpr double kPi = 3.14159265358979323846;

using config_json::fail;

struct TypeName {
  RopeType type;
  const char* name;
};
constexpr TypeName kTypes[] = {{RopeType::none, "default"},    {RopeType::linear, "linear"},
                               {RopeType::dynamic, "dynamic"}, {RopeType::llama3, "llama3"},
                               {RopeType::yarn, "yarn"},       {RopeType::longrope, "longrope"}};

// Reads rope_scaling's fields, each error naming the field and the type it belongs to.
class Fields {
 public:
  Fields(const json& block, std::string type, const std::string& origin)
      : block_(block), type_(std::move(type)), origin_(origin) {}

  std::optional<double> number(const char* key) const {
    if (!block_.contains(key) || block_.at(key).is_null()) return std::nullopt;
    const json& v = block_.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>())) {
      fail(origin_, where(key) + " must be a finite number, got " + v.dump());
    }
    return v.get<double>();
  }
  double required_number(const char* key) const {
    const std::optional<double> v = number(key);
    if (!v)
      fail(origin_, "rope_scaling of type " + type_ + " is missing required field \"" + key + "\"");
    return *v;
  }
  std::optional<int32_t> integer(const char* key) const {
    const std::optional<double> v = number(key);
    if (!v) return std::nullopt;
    if (*v != std::floor(*v) || *v < 1 || *v > std::numeric_limits<int32_t>::max()) {
      fail(origin_, where(key) + " must be a positive integer, got " + block_.at(key).dump());
    }
    return static_cast<int32_t>(*v);
  }
  // A required list of finite positive numbers.
  std::vector<double> positive_list(const char* key) const {
    if (!block_.contains(key) || block_.at(key).is_null()) {
      fail(origin_, "rope_scaling of type " + type_ + " is missing required field \"" + key + "\"");
    }
    const json& v = block_.at(key);
    if (!v.is_array()) fail(origin_, where(key) + " must be a list of numbers");
    std::vector<double> out;
    for (const json& e : v) {
      if (!e.is_number() || !std::isfinite(e.get<double>()) || !(e.get<double>() > 0)) {
        fail(origin_, where(key) + " must hold positive numbers, got " + e.dump());
      }
      out.push_back(e.get<double>());
    }
    return out;
  }
  std::optional<bool> boolean(const char* key) const {
    if (!block_.contains(key) || block_.at(key).is_null()) return std::nullopt;
    if (!block_.at(key).is_boolean()) fail(origin_, where(key) + " must be true or false");
    return block_.at(key).get<bool>();
  }

 private:
  std::string where(const char* key) const {
    return "rope_scaling (" + type_ + ") field \"" + std::string(key) + "\"";
  }
  const json& block_;
  std::string type_;
  const std::string& origin_;
};

// HF's get_mscale in _compute_yarn_parameters: the yarn paper's 0.1 ln(s) + 1 magnitude fix.
double yarn_mscale(double scale, double mscale) {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

// Python's `x or default` on an optional number (an explicit 0 counts as unset, as in HF).
double or_default(const std::optional<double>& v, double fallback) {
  return v && *v != 0.0 ? *v : fallback;
}

// The tables are computed in fp32 with the operations, in the order, that HF's torch code uses
// (its tensors are fp32; its Python scalars are cast to float where they meet a tensor), so
// that the angles agree with HF's to the last bit or so: at position 100k an ulp of inv_freq is
// a visible angle.

// _compute_default_rope_parameters: 1 / base^(float(2i) / dim), i < dim / 2.
std::vector<float> default_inv_freq(int32_t dim, float base) {
  std::vector<float> inv(static_cast<size_t>(dim / 2));
  for (int32_t i = 0; i < dim / 2; ++i) {
    inv[i] = 1.0f / std::pow(base, float(2 * i) / float(dim));
  }
  return inv;
}

void apply_llama3(const RopeScaling& rs, std::vector<float>& inv) {
  const auto old_context = float(*rs.original_max_position_embeddings);
  const auto factor = float(rs.factor);
  const auto low_wavelen = float(double(*rs.original_max_position_embeddings) / rs.low_freq_factor);
  const auto high_wavelen =
      float(double(*rs.original_max_position_embeddings) / rs.high_freq_factor);
  const auto band = float(rs.high_freq_factor - rs.low_freq_factor);
  for (float& f : inv) {
    const float wavelen = float(2 * kPi) / f;
    const float scaled = wavelen > low_wavelen ? f / factor : f;  // long wavelengths: interpolate
    if (!(wavelen < high_wavelen) && !(wavelen > low_wavelen)) {  // the band between: blend
      const float smooth = (old_context / wavelen - float(rs.low_freq_factor)) / band;
      f = (1 - smooth) * scaled / factor + smooth * scaled;
    } else {
      f = scaled;  // short wavelengths: unchanged
    }
  }
}

// _compute_yarn_parameters: below the correction range frequencies extrapolate (unchanged),
// above it they interpolate (divided by factor), with a linear ramp between.
float apply_yarn(const RopeScaling& rs, int32_t dim, float base, int32_t max_positions,
                 std::vector<float>& inv) {
  const double factor = rs.factor;
  double attention = 0;
  if (rs.attention_factor) {
    attention = *rs.attention_factor;
  } else if (or_default(rs.mscale, 0) != 0 && or_default(rs.mscale_all_dim, 0) != 0) {
    attention = yarn_mscale(factor, *rs.mscale) / yarn_mscale(factor, *rs.mscale_all_dim);
  } else {
    attention = yarn_mscale(factor, 1.0);
  }
  // The correction range is Python float (double) arithmetic in HF.
  const double beta_fast = or_default(rs.beta_fast, 32), beta_slow = or_default(rs.beta_slow, 1);
  const double original = rs.original_max_position_embeddings.value_or(max_positions);
  auto correction_dim = [&](double rotations) {
    return dim * std::log(original / (rotations * 2 * kPi)) / (2 * std::log(double(base)));
  };
  double low = correction_dim(beta_fast), high = correction_dim(beta_slow);
  if (rs.truncate.value_or(true)) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, double(dim - 1));
  if (low == high) high += 0.001;  // HF: "prevent singularity"
  const float f = float(factor);
  for (size_t i = 0; i < inv.size(); ++i) {
    const float pos_freq = std::pow(base, float(2 * i) / float(dim));  // HF's pos_freqs
    const float ramp = std::clamp((float(i) - float(low)) / float(high - low), 0.0f, 1.0f);
    const float extrapolation = 1 - ramp;
    const float interpolated = 1.0f / (f * pos_freq), extrapolated = 1.0f / pos_freq;
    inv[i] = interpolated * (1 - extrapolation) + extrapolated * extrapolation;
  }
  return static_cast<float>(attention);
}

// longrope's pretrained context: rope_scaling's field (which from_json fills from config.json's
// top level, where Phi-3 writes it), else max_position_embeddings.
int32_t longrope_original_len(const ModelConfig& c) {
  return c.rope_scaling.original_max_position_embeddings.value_or(c.max_position_embeddings);
}

// _compute_longrope_parameters: inv_freq[i] = 1 / (ext[i] * base^(2i / dim)), and the attention
// factor sqrt(1 + ln(factor) / ln(original)) unless stated, factor being the stated one or the
// ratio of the context lengths.
float apply_longrope(const ModelConfig& c, int32_t dim, float base, std::vector<float>& inv) {
  const RopeScaling& rs = c.rope_scaling;
  const size_t half = static_cast<size_t>(dim / 2);
  if (rs.short_factor.size() != half || rs.long_factor.size() != half) {
    throw std::invalid_argument(
        "rope_scaling (longrope) short_factor and long_factor need rotary_dim / 2 = " +
        std::to_string(half) + " entries each, got " + std::to_string(rs.short_factor.size()) +
        " and " + std::to_string(rs.long_factor.size()));
  }
  const int32_t original = longrope_original_len(c);
  const std::vector<double>& ext = uses_long_rope_factors(c) ? rs.long_factor : rs.short_factor;
  for (size_t i = 0; i < half; ++i) {
    const float shape = float(int64_t(2 * i)) / float(dim);
    inv[i] = 1.0f / (float(ext[i]) * std::pow(base, shape));
  }
  if (rs.attention_factor) return float(*rs.attention_factor);
  const double factor =
      rs.factor > 0 ? rs.factor : double(c.max_position_embeddings) / double(original);
  if (factor <= 1.0) return 1.0f;
  return float(std::sqrt(1.0 + std::log(factor) / std::log(double(original))));
}

}  // namespace

bool uses_long_rope_factors(const ModelConfig& c) {
  if (c.rope_scaling.type != RopeType::longrope) return false;
  const int32_t context = c.rope_context_len > 0 ? c.rope_context_len : c.max_context_len();
  return context > longrope_original_len(c);
}

const char* rope_type_name(RopeType type) {
  for (const TypeName& t : kTypes) {
    if (t.type == type) return t.name;
  }
  return "?";
}

RopeScaling parse_rope_scaling(const json& value, const std::string& origin) {
  RopeScaling rs;
  if (value.is_null()) return rs;
  if (!value.is_object())
    fail(origin, "rope_scaling must be an object or null, got " + value.dump());
  std::string type;
  for (const char* key : {"rope_type", "type"}) {
    if (value.contains(key) && !value.at(key).is_null()) {
      if (!value.at(key).is_string()) {
        fail(origin, std::string("rope_scaling field \"") + key + "\" must be a string");
      }
      type = value.at(key).get<std::string>();
      break;
    }
  }
  if (type.empty()) fail(origin, "rope_scaling has no \"rope_type\" (or \"type\") field");
  const TypeName* known = nullptr;
  for (const TypeName& t : kTypes) {
    if (type == t.name) known = &t;
  }
  if (known == nullptr) {
    fail(origin, "rope_scaling type \"" + type +
                     "\" is not supported (supported: default, linear, dynamic, llama3, yarn, "
                     "longrope)");
  }
  rs.type = known->type;
  if (rs.type == RopeType::none) return rs;

  const Fields f(value, type, origin);
  if (rs.type == RopeType::longrope) {
    rs.factor = f.number("factor").value_or(0.0);  // 0: from the context lengths
    if (rs.factor < 0 || (rs.factor == 0 && f.number("factor"))) {
      fail(origin, "rope_scaling field \"factor\" must be positive");
    }
    rs.short_factor = f.positive_list("short_factor");
    rs.long_factor = f.positive_list("long_factor");
    rs.original_max_position_embeddings = f.integer("original_max_position_embeddings");
    rs.attention_factor = f.number("attention_factor");
    if (rs.attention_factor && !(*rs.attention_factor > 0)) {
      fail(origin, "rope_scaling field \"attention_factor\" must be positive");
    }
    return rs;
  }
  rs.factor = f.required_number("factor");
  if (!(rs.factor > 0)) fail(origin, "rope_scaling field \"factor\" must be positive");
  if (rs.type == RopeType::llama3) {
    rs.low_freq_factor = f.required_number("low_freq_factor");
    rs.high_freq_factor = f.required_number("high_freq_factor");
    if (!f.integer("original_max_position_embeddings")) {
      f.required_number("original_max_position_embeddings");  // throws: missing
    }
    rs.original_max_position_embeddings = f.integer("original_max_position_embeddings");
    if (!(rs.low_freq_factor > 0) || !(rs.high_freq_factor > rs.low_freq_factor)) {
      fail(origin, "rope_scaling (llama3) needs 0 < low_freq_factor < high_freq_factor");
    }
  } else if (rs.type == RopeType::yarn) {
    rs.original_max_position_embeddings = f.integer("original_max_position_embeddings");
    rs.beta_fast = f.number("beta_fast");
    rs.beta_slow = f.number("beta_slow");
    rs.mscale = f.number("mscale");
    rs.mscale_all_dim = f.number("mscale_all_dim");
    rs.attention_factor = f.number("attention_factor");
    rs.truncate = f.boolean("truncate");
  }
  return rs;
}

RopeScaling parse_rope_parameters(const json& value, const std::string& origin, float* theta,
                                  float* partial_rotary_factor) {
  if (value.is_null()) return RopeScaling{};
  if (!value.is_object()) {
    fail(origin, "rope_parameters must be an object or null, got " + value.dump());
  }
  for (const auto& [key, v] : value.items()) {
    if (v.is_object()) {
      fail(origin, "rope_parameters per layer type (\"" + key + "\": {...}) is not supported");
    }
  }
  json block = value;
  if (!block.contains("rope_type") && !block.contains("type")) block["rope_type"] = "default";
  const Fields f(block, "rope_parameters", origin);
  if (const auto t = f.number("rope_theta")) *theta = float(*t);
  if (const auto p = f.number("partial_rotary_factor")) *partial_rotary_factor = float(*p);
  return parse_rope_scaling(block, origin);
}

json rope_scaling_to_json(const RopeScaling& rs) {
  if (rs.type == RopeType::none) return nullptr;
  json j;
  j["rope_type"] = rope_type_name(rs.type);
  if (rs.type == RopeType::longrope) {
    if (rs.factor > 0) j["factor"] = rs.factor;
    j["short_factor"] = rs.short_factor;
    j["long_factor"] = rs.long_factor;
  } else {
    j["factor"] = rs.factor;
  }
  if (rs.type == RopeType::llama3) {
    j["low_freq_factor"] = rs.low_freq_factor;
    j["high_freq_factor"] = rs.high_freq_factor;
  }
  if (rs.original_max_position_embeddings) {
    j["original_max_position_embeddings"] = *rs.original_max_position_embeddings;
  }
  auto put = [&](const char* key, const std::optional<double>& v) {
    if (v) j[key] = *v;
  };
  put("beta_fast", rs.beta_fast);
  put("beta_slow", rs.beta_slow);
  put("mscale", rs.mscale);
  put("mscale_all_dim", rs.mscale_all_dim);
  put("attention_factor", rs.attention_factor);
  if (rs.truncate) j["truncate"] = *rs.truncate;
  return j;
}

int32_t rotary_dim_of(int32_t head_dim, float partial_rotary_factor) {
  // float(head_dim * factor) then truncation, as Python's int() on the product.
  return static_cast<int32_t>(double(head_dim) * double(partial_rotary_factor));
}

RopeFrequencies rope_frequencies(const ModelConfig& c) {
  const int32_t dim = rotary_dim_of(c.head_dim, c.partial_rotary_factor);
  if (dim <= 0 || dim > c.head_dim || dim % 2 != 0) {
    throw std::invalid_argument("partial_rotary_factor " + std::to_string(c.partial_rotary_factor) +
                                " gives rotary dim " + std::to_string(dim) + " for head_dim " +
                                std::to_string(c.head_dim) +
                                "; it must be even and in [2, head_dim]");
  }
  const RopeScaling& rs = c.rope_scaling;
  double base = c.rope_theta;
  if (rs.type == RopeType::dynamic) {
    if (dim <= 2) throw std::invalid_argument("rope_scaling dynamic needs a rotary dim above 2");
    // HF's formula at seq_len = max_position_embeddings * factor (vLLM's fixed choice).
    const double seq_len = double(c.max_position_embeddings) * rs.factor;
    base *= std::pow(rs.factor * seq_len / c.max_position_embeddings - (rs.factor - 1),
                     double(dim) / (dim - 2));
  }
  std::vector<float> inv = default_inv_freq(dim, float(base));
  float attention = 1.0f;
  switch (rs.type) {
    case RopeType::none:
    case RopeType::dynamic:
      break;
    case RopeType::linear:
      for (float& f : inv) f /= float(rs.factor);
      break;
    case RopeType::llama3:
      apply_llama3(rs, inv);
      break;
    case RopeType::yarn:
      attention = apply_yarn(rs, dim, float(base), c.max_position_embeddings, inv);
      break;
    case RopeType::longrope:
      attention = apply_longrope(c, dim, float(base), inv);
      break;
  }
  RopeFrequencies out;
  out.rotary_dim = dim;
  out.attention_factor = attention;
  out.inv_freq = std::move(inv);
  return out;
}

int32_t scaled_context_len(const RopeScaling& rs, int32_t max_position_embeddings) {
  double len = max_position_embeddings;
  switch (rs.type) {
    case RopeType::none:
    case RopeType::llama3:
    case RopeType::longrope:
      return max_position_embeddings;
    case RopeType::yarn:
      len = rs.original_max_position_embeddings.value_or(max_position_embeddings);
      [[fallthrough]];
    case RopeType::linear:
    case RopeType::dynamic:
      len *= rs.factor;
      break;
  }
  return static_cast<int32_t>(std::min<double>(len, std::numeric_limits<int32_t>::max()));
}

}  // namespace ps
