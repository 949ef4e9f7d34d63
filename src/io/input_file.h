// Reads a whole input file named on the command line. A directory, FIFO or
// device is refused before it is opened: a FIFO nobody writes would block
// the command forever, /dev/zero would never end.
#pragma once

#include <string>

namespace parplan {

/// The bytes of `path`. `label` starts each error line (e.g. "--loads
/// x.json"); `expected` says what to give instead (e.g. "a JSON or CSV file").
std::string read_input_file(const std::string& path, const std::string& label, const std::string& expected);

}  // namespace parplan
