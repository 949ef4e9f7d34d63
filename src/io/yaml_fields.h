// Strict readers for YAML mappings: each failure becomes one InputError line
// naming the file and the field.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>

namespace parplan {

class YamlFields {
 public:
  YamlFields(const YAML::Node& node, std::string where);

  /// Throws unless every key is one of `allowed`.
  void allow_only(std::initializer_list<const char*> allowed) const;
  bool has(const char* key) const;
  double positive_number(const char* key) const;
  double positive_number(const char* key, double fallback) const;
  /// A number in [low, high].
  double number_in(const char* key, double low, double high, double fallback) const;
  int positive_int(const char* key) const;
  int positive_int(const char* key, int fallback) const;
  int non_negative_int(const char* key, int fallback) const;
  bool boolean(const char* key, bool fallback) const;
  std::string text(const char* key) const;
  std::string text(const char* key, const std::string& fallback) const;
  YamlFields child(const char* key) const;
  YAML::Node node(const char* key) const;
  [[noreturn]] void fail(const char* key, const std::string& what) const;
  const std::string& where() const { return where_; }

 private:
  YAML::Node node_;
  std::string where_;
};

/// Loads a YAML file; throws InputError with the parser's line on bad syntax.
YAML::Node load_yaml_file(const std::string& path);

}  // namespace parplan
