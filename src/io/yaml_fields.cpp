#include "src/io/yaml_fields.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "src/io/input_error.h"

namespace parplan {

YamlFields::YamlFields(const YAML::Node& node, std::string where) : node_(node), where_(std::move(where)) {
  if (!node_.IsMap()) throw InputError(where_ + ": expected a mapping of fields");
}

void YamlFields::fail(const char* key, const std::string& what) const {
  throw InputError(where_ + ": field '" + key + "' " + what);
}

void YamlFields::allow_only(std::initializer_list<const char*> allowed) const {
  for (const auto& entry : node_) {
    const std::string key = entry.first.as<std::string>("");
    bool known = false;
    std::string list;
    for (const char* name : allowed) {
      known = known || key == name;
      list += (list.empty() ? "" : ", ") + std::string(name);
    }
    if (!known) throw InputError(where_ + ": unknown field '" + key + "' (known fields: " + list + ")");
  }
}

bool YamlFields::has(const char* key) const { return node_[key].IsDefined() && !node_[key].IsNull(); }

namespace {
bool scalar_number(const YAML::Node& node, double& out) {
  if (!node.IsScalar()) return false;
  std::istringstream in(node.Scalar());
  in >> out;
  return in && in.peek() == std::char_traits<char>::eof() && std::isfinite(out);
}
}  // namespace

double YamlFields::positive_number(const char* key) const {
  if (!has(key)) fail(key, "is missing; add it");
  double value = 0;
  if (!scalar_number(node_[key], value)) fail(key, "must be a number (got '" + node_[key].Scalar() + "')");
  if (value <= 0) fail(key, "must be positive (got " + node_[key].Scalar() + ")");
  return value;
}

double YamlFields::positive_number(const char* key, double fallback) const {
  return has(key) ? positive_number(key) : fallback;
}

double YamlFields::number_in(const char* key, double low, double high, double fallback) const {
  if (!has(key)) return fallback;
  double value = 0;
  if (!scalar_number(node_[key], value)) fail(key, "must be a number (got '" + node_[key].Scalar() + "')");
  if (value < low || value > high) {
    std::ostringstream range;
    range << "must be between " << low << " and " << high << " (got " << node_[key].Scalar() << ")";
    fail(key, range.str());
  }
  return value;
}

int YamlFields::positive_int(const char* key) const {
  const double value = positive_number(key);
  if (value != std::floor(value) || value > 2e9) fail(key, "must be a positive integer (got " + node_[key].Scalar() + ")");
  return static_cast<int>(value);
}

int YamlFields::positive_int(const char* key, int fallback) const {
  return has(key) ? positive_int(key) : fallback;
}

int YamlFields::non_negative_int(const char* key, int fallback) const {
  if (!has(key)) return fallback;
  double value = 0;
  if (!scalar_number(node_[key], value) || value < 0 || value != std::floor(value) || value > 2e9)
    fail(key, "must be a non-negative integer (got '" + node_[key].Scalar() + "')");
  return static_cast<int>(value);
}

bool YamlFields::boolean(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  const std::string v = node_[key].IsScalar() ? node_[key].Scalar() : "";
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off") return false;
  fail(key, "must be true or false (got '" + v + "')");
}

std::string YamlFields::text(const char* key) const {
  if (!has(key)) fail(key, "is missing; add it");
  if (!node_[key].IsScalar()) fail(key, "must be a string");
  return node_[key].Scalar();
}

std::string YamlFields::text(const char* key, const std::string& fallback) const {
  return has(key) ? text(key) : fallback;
}

YamlFields YamlFields::child(const char* key) const {
  if (!has(key)) fail(key, "is missing; add it");
  if (!node_[key].IsMap()) fail(key, "must be a mapping");
  return YamlFields(node_[key], where_ + ": " + key);
}

YAML::Node YamlFields::node(const char* key) const { return node_[key]; }

YAML::Node load_yaml_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot be read");
  try {
    return YAML::Load(in);
  } catch (const YAML::Exception& e) {
    throw InputError(path + ": malformed YAML at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

}  // namespace parplan
