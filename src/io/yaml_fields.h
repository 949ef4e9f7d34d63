// Strict readers for YAML mappings (models, clusters, jobs, runs): each
// failure becomes one InputError line naming the file, the line and the field;
// unknown fields get a did-you-mean suggestion and duplicate keys are refused.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace parplan {

class YamlFields {
 public:
  /// `where` names the input in messages (a file path, or "path: tiers[0]");
  /// `prefix` is put before field names ("moe." for the block moe:). Throws
  /// unless `node` is a mapping whose keys are plain words, each given once,
  /// each with a value: `key:`, `key: ~` and `key: null` are refused, not
  /// read as absent (which would use the default without a word).
  YamlFields(const YAML::Node& node, std::string where, std::string prefix = "");

  /// Throws unless every key is one of `allowed` (naming the nearest one).
  void allow_only(std::initializer_list<const char*> allowed) const;
  void allow_only(const std::vector<std::string>& allowed) const;
  bool has(const char* key) const;
  double positive_number(const char* key) const;
  double positive_number(const char* key, double fallback) const;
  /// A finite number in [low, high].
  double number_in(const char* key, double low, double high, double fallback) const;
  int positive_int(const char* key) const;
  int positive_int(const char* key, int fallback) const;
  int non_negative_int(const char* key, int fallback) const;
  /// A decimal integer in [low, high] written as such (no "1.5", no
  /// exponent, a leading zero is not octal); nullopt when absent.
  std::optional<int64_t> integer(const char* key, int64_t low, int64_t high) const;
  bool boolean(const char* key, bool fallback) const;
  std::string text(const char* key) const;
  std::string text(const char* key, const std::string& fallback) const;
  /// One of `choices`; the first when absent.
  std::string choice(const char* key, std::initializer_list<const char*> choices) const;
  YamlFields child(const char* key) const;
  /// A nested mapping, or nullopt when absent.
  std::optional<YamlFields> block(const char* key) const;
  YAML::Node node(const char* key) const;
  /// The 1-based line of `key`'s value (0 when unknown).
  int line(const char* key) const;
  /// "prefix.key", as messages name the field.
  std::string full(const char* key) const { return prefix_ + key; }
  [[noreturn]] void fail(const char* key, const std::string& what) const;
  /// A message about the mapping as a whole (no field).
  [[noreturn]] void fail_here(const std::string& message, int line = 0) const;
  const std::string& where() const { return where_; }

 private:
  YAML::Node node_;
  std::string where_;
  std::string prefix_;
};

/// What a YAML node is, for "(got ...)" when it is the wrong type.
std::string describe_yaml(const YAML::Node& node);
/// The 1-based line of a node (0 when unknown).
int yaml_line(const YAML::Node& node);

/// Loads a YAML file of one document; throws InputError with the parser's
/// line on bad syntax, and for a second document, a directory or a FIFO.
YAML::Node load_yaml_file(const std::string& path);
/// The bytes of a YAML input file, with load_yaml_file's checks (a regular
/// file, within the size limit, readable).
std::string read_yaml_file_text(const std::string& path);
/// The same for text already read; `origin` names it in messages.
YAML::Node load_yaml_text(const std::string& text, const std::string& origin);

}  // namespace parplan
