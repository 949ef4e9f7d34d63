// Where the catalogs (models/, hardware-profiles/) live, and how a name given
// on the command line becomes a file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace parplan {

/// The directory holding models/ and hardware-profiles/: $PARPLAN_DATA_DIR if
/// set, else the source tree parplan was built from.
std::filesystem::path data_dir();

/// A catalog entry: `name` as a path if it names an existing file, else
/// data_dir()/folder/name.yaml. Throws InputError naming `flag` and listing
/// the catalog when neither exists.
std::filesystem::path resolve_catalog_file(const std::string& folder, const std::string& name,
                                           const std::string& flag);

/// Names (file stems) in data_dir()/folder, sorted.
std::vector<std::string> catalog_names(const std::string& folder);

}  // namespace parplan
