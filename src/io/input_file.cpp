#include "src/io/input_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/io/input_error.h"

namespace parplan {

std::string read_input_file(const std::string& path, const std::string& label, const std::string& expected) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found)
    throw InputError(label + ": no such file; check the path");
  if (!ec && status.type() != std::filesystem::file_type::regular)
    throw InputError(label + ": is not a regular file (a directory, FIFO or device); give " + expected);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) throw InputError(label + ": cannot open the file; check the path and its permissions");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(label + ": cannot read the file");
  return text.str();
}

}  // namespace parplan
