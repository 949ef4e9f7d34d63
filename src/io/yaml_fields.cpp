#include "src/io/yaml_fields.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/printable_text.h"
#include "src/io/suggest.h"

namespace parplan {

namespace {

// Line breaks and tabs as spaces, any other control byte (a NUL a parser
// quotes back would cut the line) as \xNN.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return printable_line(text);
}

// Input text quoted in a message: escaped and cut (src/io/printable_text.h).
std::string shorten(const std::string& text) { return printable_text(text); }

bool scalar_number(const YAML::Node& node, double& out) {
  if (!node.IsScalar() || node.Tag() == "!") return false;
  std::istringstream in(node.Scalar());
  in >> out;
  return in && in.peek() == std::char_traits<char>::eof() && std::isfinite(out);
}

std::string range_text(double low, double high) {
  std::ostringstream out;
  out << low << " and " << high;
  return out.str();
}

}  // namespace

int yaml_line(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

std::string describe_yaml(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  if (node.Tag() == "!") return "the quoted string '" + shorten(node.Scalar()) + "'";
  return "'" + shorten(node.Scalar()) + "'";
}

YamlFields::YamlFields(const YAML::Node& node, std::string where, std::string prefix)
    : node_(node), where_(std::move(where)), prefix_(std::move(prefix)) {
  if (!node_.IsMap()) {
    fail_here(prefix_.empty() ? "expected a mapping of fields (got " + describe_yaml(node_) + ")"
                              : "field '" + prefix_.substr(0, prefix_.size() - 1) +
                                    "' must be a mapping of sub-fields (got " + describe_yaml(node_) + ")",
              yaml_line(node_));
  }
  std::set<std::string> seen;
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) fail_here("field names must be plain words", yaml_line(entry.first));
    const std::string key = entry.first.Scalar();
    if (!seen.insert(key).second)
      fail_here("field '" + prefix_ + shorten(key) + "' is given twice; keep one", yaml_line(entry.first));
    // A key with no value (`precision:`, `precision: ~`) would otherwise
    // read as absent, and its default would be used without a word.
    if (entry.second.IsNull())
      fail_here("field '" + prefix_ + shorten(key) + "' is empty (null); give a value or remove the key",
                yaml_line(entry.first));
  }
}

void YamlFields::fail_here(const std::string& message, int line) const {
  std::string at = where_;
  if (line > 0) at += ":" + std::to_string(line);
  throw InputError(one_line(at + ": " + message));
}

void YamlFields::fail(const char* key, const std::string& what) const {
  fail_here("field '" + full(key) + "' " + what, line(key));
}

int YamlFields::line(const char* key) const {
  for (const auto& entry : node_)
    if (entry.first.Scalar() == key) return yaml_line(entry.second.IsNull() ? entry.first : entry.second);
  return 0;
}

void YamlFields::allow_only(std::initializer_list<const char*> allowed) const {
  allow_only(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void YamlFields::allow_only(const std::vector<std::string>& allowed) const {
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    bool known = false;
    for (const auto& name : allowed) known = known || key == name;
    if (!known)
      fail_here("unknown field '" + prefix_ + shorten(key) + "' (" + suggest(shorten(key), allowed) +
                    "); remove it or fix the spelling",
                yaml_line(entry.first));
  }
}

bool YamlFields::has(const char* key) const { return node_[key].IsDefined() && !node_[key].IsNull(); }

double YamlFields::positive_number(const char* key) const {
  if (!has(key)) fail(key, "is missing; add it");
  double value = 0;
  if (!scalar_number(node_[key], value))
    fail(key, "must be a number (got " + describe_yaml(node_[key]) + ")");
  if (value <= 0) fail(key, "must be positive (got " + node_[key].Scalar() + ")");
  return value;
}

double YamlFields::positive_number(const char* key, double fallback) const {
  return has(key) ? positive_number(key) : fallback;
}

double YamlFields::number_in(const char* key, double low, double high, double fallback) const {
  if (!has(key)) return fallback;
  double value = 0;
  if (!scalar_number(node_[key], value))
    fail(key, "must be a number (got " + describe_yaml(node_[key]) + ")");
  if (value < low || value > high)
    fail(key, "must be between " + range_text(low, high) + " (got " + node_[key].Scalar() + ")");
  return value;
}

std::optional<int64_t> YamlFields::integer(const char* key, int64_t low, int64_t high) const {
  if (!has(key)) return std::nullopt;
  const YAML::Node& node = node_[key];
  const bool open_ended = high >= 1000000000;
  const std::string kind = open_ended && low == 1 ? "a positive integer"
                           : open_ended && low == 0
                               ? "a non-negative integer"
                               : "an integer from " + std::to_string(low) + " to " + std::to_string(high);
  // A bounded kind already states its upper end.
  const std::string at_most = open_ended ? ", too large: at most " + std::to_string(high) : ", too large";
  if (!node.IsScalar() || node.Tag() == "!")
    fail(key, "must be " + kind + " (got " + describe_yaml(node) + ")");
  const std::string& text = node.Scalar();
  int64_t value = 0;
  const char* begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range)
    fail(key, "must be " + kind + " (got " + shorten(text) + at_most + ")");
  if (ec != std::errc() || ptr != end) fail(key, "must be " + kind + " (got " + describe_yaml(node) + ")");
  if (value < low) fail(key, "must be " + kind + " (got " + text + ")");
  if (value > high) fail(key, "must be " + kind + " (got " + text + at_most + ")");
  return value;
}

int YamlFields::positive_int(const char* key) const {
  if (!has(key)) fail(key, "is missing; add it");
  return static_cast<int>(*integer(key, 1, 2000000000));
}

int YamlFields::positive_int(const char* key, int fallback) const {
  return has(key) ? positive_int(key) : fallback;
}

int YamlFields::non_negative_int(const char* key, int fallback) const {
  return static_cast<int>(integer(key, 0, 2000000000).value_or(fallback));
}

bool YamlFields::boolean(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  const YAML::Node& node = node_[key];
  std::string v = node.IsScalar() && node.Tag() != "!" ? node.Scalar() : "";
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off") return false;
  fail(key, "must be true or false (got " + describe_yaml(node) + ")");
}

std::string YamlFields::text(const char* key) const {
  if (!has(key)) fail(key, "is missing; add it");
  if (!node_[key].IsScalar() || node_[key].Scalar().empty())
    fail(key, "must be a text string (got " + describe_yaml(node_[key]) + ")");
  // Names are printed, written to JSON and SVG and looked up: none of which
  // can carry bytes that are not UTF-8.
  if (!is_utf8(node_[key].Scalar()))
    fail(key, "holds bytes that are not UTF-8 text ('" + shorten(node_[key].Scalar()) +
                  "'); save the file as UTF-8");
  return node_[key].Scalar();
}

std::string YamlFields::text(const char* key, const std::string& fallback) const {
  return has(key) ? text(key) : fallback;
}

std::string YamlFields::choice(const char* key, std::initializer_list<const char*> choices) const {
  if (!has(key)) return *choices.begin();
  const YAML::Node& node = node_[key];
  if (node.IsScalar())
    for (const char* c : choices)
      if (node.Scalar() == c) return c;
  std::string list;
  for (const char* c : choices) list += (list.empty() ? "" : " or ") + std::string(c);
  fail(key, "must be " + list + " (got " + describe_yaml(node) + ")");
}

YamlFields YamlFields::child(const char* key) const {
  if (!has(key)) fail(key, "is missing; add it");
  return YamlFields(node_[key], where_, full(key) + ".");
}

std::optional<YamlFields> YamlFields::block(const char* key) const {
  if (!has(key)) return std::nullopt;
  return YamlFields(node_[key], where_, full(key) + ".");
}

YAML::Node YamlFields::node(const char* key) const {
  // A missing key is a valid undefined node: yaml-cpp's own lookup returns
  // an invalid one, whose IsSequence() throws "invalid node" instead of
  // letting the caller say that the field is missing.
  const YAML::Node value = node_[key];
  return value.IsDefined() ? value : YAML::Node(YAML::NodeType::Undefined);
}

namespace {
// Documents after the first: a "---" line once content has been seen, or
// content after a "..." end marker. (yaml-cpp 0.7's LoadAll can loop forever
// on malformed input, so the separators are counted on the text.)
int extra_documents(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  bool content = false, ended = false;
  int extra = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const bool separator =
        line.rfind("---", 0) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
    const bool end_marker =
        line.rfind("...", 0) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
    const auto first = line.find_first_not_of(" \t");
    const bool blank = first == std::string::npos || line[first] == '#';
    if (separator) {
      if (content || ended) ++extra;
      content = false, ended = false;
      // "--- value" starts a document with content on the same line.
      const auto rest = line.find_first_not_of(" \t", 3);
      if (rest != std::string::npos && line[rest] != '#') content = true;
    } else if (end_marker) {
      ended = content || ended;
      content = false;
    } else if (!blank && line[0] != '%') {
      if (ended) ++extra, ended = false;
      content = true;
    }
  }
  return extra;
}
}  // namespace

YAML::Node load_yaml_text(const std::string& text, const std::string& origin) {
  try {
    if (const int extra = extra_documents(text); extra > 0)
      throw InputError(origin + ": holds " + std::to_string(extra + 1) +
                       " YAML documents (separated by '---'); give one");
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const std::string line = e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1);
    throw InputError(one_line(origin + line + ": invalid YAML (" + e.msg + "); fix the syntax"));
  }
}

YAML::Node load_yaml_file(const std::string& path) { return load_yaml_text(read_yaml_file_text(path), path); }

std::string read_yaml_file_text(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw InputError(path + ": is not a regular file (a directory, FIFO or device); give a YAML file");
  const auto bytes = std::filesystem::file_size(path, ec);
  if (!ec && bytes > static_cast<std::uintmax_t>(kMaxYamlFileBytes))
    throw InputError(path + ": is " + std::to_string(bytes) + " bytes; a YAML input has at most " +
                     std::to_string(kMaxYamlFileBytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot be read; check that it exists and is readable");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot be read; check that it exists and is readable");
  return text.str();
}

}  // namespace parplan
