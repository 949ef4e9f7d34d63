// parplan: command-line entry. Subcommands live in their own files; this one
// dispatches and turns every error into one line on stderr with exit code 2.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>

#include "src/cli/commands.h"
#include "src/io/input_error.h"

int main(int argc, char** argv) {
  using namespace parplan;
  CLI::App app{"parplan: parallelism planner for training large language models on GPU clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("parplan 0.1.0"));
  Commands commands;
  register_commands(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where = "parplan";
    for (const auto* sub : app.get_subcommands()) where += " " + sub->get_name();
    std::cerr << where << ": " << e.what() << " (run '" << where << " --help')\n";
    return 2;
  }
  try {
    return run_selected(app, commands);
  } catch (const InputError& e) {
    std::cerr << "parplan: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "parplan: internal error: " << e.what() << "\n";
    return 3;
  }
}
