// parplan: command-line entry. Subcommands live in their own files;
// cli_main() dispatches and turns every error into one line on stderr.
#include "src/cli/cli_main.h"

int main(int argc, char** argv) { return parplan::cli_main(argc, argv); }
