#include "src/io/model_loader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/model_checks.h"

namespace parplan {
namespace {

std::string read_file(const std::filesystem::path& path, const std::string& origin) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    model_fail(origin, 0, "is not a regular file (a directory, FIFO or device): give a model file");
  if (const auto bytes = std::filesystem::file_size(path, ec);
      !ec && bytes > static_cast<std::uintmax_t>(kMaxInputFileBytes))
    model_fail(origin, 0,
               "is " + std::to_string(bytes) + " bytes; a model file has at most " +
                   std::to_string(kMaxInputFileBytes));
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || in.bad()) model_fail(origin, 0, "cannot read the file: check that it exists and is readable");
  return text.str();
}

bool ends_with_json(const std::string& path) {
  if (path.size() < 5) return false;
  std::string tail = path.substr(path.size() - 5);
  std::transform(tail.begin(), tail.end(), tail.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return tail == ".json";
}

bool looks_like_json(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return false;
  return nlohmann::json::accept(text);
}

/// The catalog entry first for a bare name (catalog names such as gpt-1.7b carry a
/// dot, which resolve_catalog_file would take for a file extension), else
/// resolve_catalog_file's rules and errors.
std::filesystem::path locate(const std::string& name_or_path) {
  std::error_code ec;
  if (!name_or_path.empty() && name_or_path.find('/') == std::string::npos &&
      !std::filesystem::is_regular_file(name_or_path, ec)) {
    const auto in_catalog = data_dir() / "models" / (name_or_path + ".yaml");
    if (std::filesystem::is_regular_file(in_catalog, ec)) return in_catalog;
  }
  return resolve_catalog_file("models", name_or_path, "--model");
}

}  // namespace

ModelSpec load_model(const std::string& name_or_path) {
  const std::filesystem::path path = locate(name_or_path);
  // A file given by path is named as the user wrote it; a catalog entry as models/NAME.yaml.
  const bool from_catalog = path.string() != name_or_path;
  const std::string origin = from_catalog ? "models/" + path.filename().string() : name_or_path;
  const std::string text = read_file(path, origin);
  if (ends_with_json(path.string()) || looks_like_json(text)) return parse_hf_config(text, origin);
  return parse_model_yaml(text, origin, path.stem().string());
}

}  // namespace parplan