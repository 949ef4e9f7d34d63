#include "src/cli/cli_main.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "src/cli/commands.h"
#include "src/io/input_error.h"
#include "src/io/printable_text.h"
#include "src/io/suggest.h"

namespace parplan {

namespace {

// CLI11 prefixes a validator's message with the option name; our validators
// already start with it ("--gbs must be ..."), so drop the repeat.
std::string without_repeated_name(const std::string& message) {
  const std::size_t colon = message.find(": ");
  if (colon == std::string::npos) return message;
  const std::string name = message.substr(0, colon);
  const std::string rest = message.substr(colon + 2);
  // CLI11's words for an option given more than once.
  const std::string repeated = "At Most 1 required but received ";
  if (rest.rfind(repeated, 0) == 0)
    return name + " is given " + rest.substr(repeated.size()) + " times; give it once";
  return rest.rfind(name, 0) == 0 ? rest : message;
}

// The first word that is not an option, when it names no subcommand.
std::string unknown_command(const CLI::App& app, int argc, const char* const* argv) {
  if (argc < 2) return "";
  const std::string first = argv[1];
  if (first.empty() || first[0] == '-') return "";
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->check_name(first)) return "";
  }
  return first;
}

// An option given an empty value ("--precision ''", an unset shell
// variable) is a mistake, not the option left out: most commands read an
// empty string as "not given" and would use their default silently.
std::string empty_value_error(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    for (const CLI::Option* option : sub->get_options()) {
      if (option->count() == 0 || option->get_expected_min() == 0) continue;
      for (const std::string& value : option->results()) {
        if (!value.empty()) continue;
        const std::string where = "parplan " + sub->get_name();
        return where + ": " + option->get_name() + " is empty: give a value or leave the option out (run '" +
               where + " --help')";
      }
    }
  }
  return "";
}

// The first --option the command does not have, named with the nearest one
// it has: CLI11 would report a missing required option first ("--loads is
// required" for a mistyped --load), or list the stray words in reverse
// order ("not expected: 3 --tpp").
std::string unknown_option(const CLI::App& app, int argc, const char* const* argv) {
  if (argc < 3) return "";
  const CLI::App* sub = nullptr;
  for (const CLI::App* each : app.get_subcommands({}))
    if (each->check_name(argv[1])) sub = each;
  if (sub == nullptr) return "";
  for (int i = 2; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (word.size() < 3 || word.compare(0, 2, "--") != 0) continue;
    const std::string name = word.substr(0, word.find('='));
    if (sub->get_option_no_throw(name) != nullptr || app.get_option_no_throw(name) != nullptr) continue;
    std::string nearest;
    std::size_t best = 3;  // at most two edits away
    for (const CLI::Option* option : sub->get_options())
      for (const std::string& long_name : option->get_lnames()) {
        const std::size_t d = edit_distance(name.substr(2), long_name);
        if (d < best) best = d, nearest = "--" + long_name;
      }
    const std::string where = "parplan " + sub->get_name();
    return where + ": unknown option " + printable_text(name) +
           (nearest.empty() ? "" : " (did you mean " + nearest + "?)") + " (run '" + where + " --help')";
  }
  return "";
}

}  // namespace

int cli_main(int argc, const char* const* argv) {
  CLI::App app{"parplan: parallelism planner for training large language models on GPU clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("parplan 0.1.0"));
  Commands commands;
  register_commands(app, commands);
  std::string names;
  for (const CLI::App* sub : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
  if (const std::string word = unknown_command(app, argc, argv); !word.empty()) {
    std::cerr << "parplan: unknown command '" << printable_text(word) << "' (commands: " << names
              << "; run 'parplan --help')\n";
    return 2;
  }
  if (const std::string problem = unknown_option(app, argc, argv); !problem.empty()) {
    std::cerr << problem << "\n";
    return 2;
  }
  // Help and version text lost to a full disk is an error too.
  const auto printed = [](int rc) {
    errno = 0;
    std::cout.flush();
    if ((!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) && errno != EPIPE) {
      const std::string why = errno != 0 ? std::string(": ") + std::strerror(errno) : "";
      std::cerr << "parplan: cannot write the report to standard output" << why
                << "; check the disk or pipe it goes to\n";
      return 2;
    }
    return rc;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return printed(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return printed(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return printed(app.exit(e));
  } catch (const CLI::ParseError& e) {
    std::string where = "parplan";
    for (const auto* sub : app.get_subcommands()) where += " " + sub->get_name();
    if (where == "parplan" && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      std::cerr << "parplan: give a command (" << names << "; run 'parplan --help')\n";
      return 2;
    }
    std::cerr << where << ": " << printable_line(without_repeated_name(e.what())) << " (run '" << where
              << " --help')\n";
    return 2;
  }
  if (const std::string empty = empty_value_error(app); !empty.empty()) {
    std::cerr << empty << "\n";
    return 2;
  }
  try {
    // A full disk behind a redirection would otherwise lose the report
    // without a word and exit 0; a reader that stopped early (`| head`) is
    // not an error.
    return printed(run_selected(app, commands));
  } catch (const InputError& e) {
    // Whatever part of an input the message quotes, the terminal gets no
    // control byte of it (src/io/printable_text.h).
    std::cerr << "parplan: " << printable_line(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "parplan: out of memory; the input is too large for this machine (see docs/errors.md)\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "parplan: internal error (please report it): " << printable_line(e.what()) << "\n";
    return 3;
  }
}

}  // namespace parplan
