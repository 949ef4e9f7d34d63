#include "src/io/data_paths.h"

#include <algorithm>
#include <cstdlib>

#include "src/io/input_error.h"

namespace parplan {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("PARPLAN_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return PARPLAN_SOURCE_DIR;
}

std::vector<std::string> catalog_names(const std::string& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir() / folder, ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::filesystem::path resolve_catalog_file(const std::string& folder, const std::string& name,
                                           const std::string& flag) {
  std::error_code ec;
  if (name.empty()) throw InputError(flag + " is empty: give a catalog name or a file path");
  std::filesystem::path as_path(name);
  if (std::filesystem::is_regular_file(as_path, ec)) return as_path;
  // Catalog names may hold dots (gpt-1.7b); only a slash or a file suffix
  // makes a name a path.
  const auto ext = as_path.extension().string();
  const bool looks_like_path =
      name.find('/') != std::string::npos || ext == ".yaml" || ext == ".yml" || ext == ".json";
  // A directory, FIFO or device given as a path: say so (reading a FIFO
  // would block forever).
  if (std::filesystem::exists(as_path, ec) &&
      (looks_like_path || !std::filesystem::is_directory(as_path, ec)))
    throw InputError(flag + " '" + name + "' is not a regular file; give a " +
                     (folder == "models" ? "model YAML or config.json" : "YAML") + " file");
  auto in_catalog = data_dir() / folder / (name + ".yaml");
  if (!looks_like_path && std::filesystem::is_regular_file(in_catalog, ec)) return in_catalog;
  if (looks_like_path) throw InputError(flag + " '" + name + "': no such file");
  std::string known;
  for (const auto& n : catalog_names(folder)) known += (known.empty() ? "" : ", ") + n;
  throw InputError(flag + " '" + name + "' is not in the catalog (" + known + ") and is not a file");
}

}  // namespace parplan
