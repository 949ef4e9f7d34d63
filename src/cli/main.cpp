// parplan: command-line entry. Subcommands live in their own files;
// cli_main() dispatches and turns every error into one line on stderr.
#include "src/cli/cli_main.h"

#if defined(__GLIBC__) || __has_include(<malloc.h>)
#include <malloc.h>
#endif

int main(int argc, char** argv) {
#ifdef M_TOP_PAD
  // CBC copies and frees its factorization arrays at every branching node;
  // with glibc's default 128 KiB top pad each copy grows the heap with brk
  // and each free trims it back (system time and page faults that were most
  // of a heterogeneous plan's certificate). Keep 64 MiB at the heap top.
  mallopt(M_TOP_PAD, 64 << 20);
#endif
  return parplan::cli_main(argc, argv);
}
