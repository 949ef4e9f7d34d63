// The whole command line as a function: parses argv, runs the subcommand and
// turns every error into one line on stderr. main() and the CLI fuzz target
// call it.
#pragma once

namespace parplan {

/// Exit codes: 0 ok, 1 no feasible plan / check failed, 2 bad input,
/// 3 internal error (a bug: please report it). docs/errors.md.
int cli_main(int argc, const char* const* argv);

}  // namespace parplan
