// The shared readings of input text: quoted excerpts (escaped, cut), the
// integer every flag reads, and JSON library messages without their prefix.
#include <gtest/gtest.h>

#include <climits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/cli/common_flags.h"
#include "src/io/decimal_int.h"
#include "src/io/input_error.h"
#include "src/io/input_file.h"
#include "src/io/printable_text.h"
#include "src/plan/sweep.h"

namespace parplan {
namespace {

bool all_printable_ascii(const std::string& text) {
  for (const char c : text)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

TEST(PrintableText, PlainTextIsKept) {
  EXPECT_EQ(printable_text("precision"), "precision");
  // Valid UTF-8 is text, not garbage.
  EXPECT_EQ(printable_text("caf\xc3\xa9 \xc3\x97 2"), "caf\xc3\xa9 \xc3\x97 2");
}

TEST(PrintableText, ControlAndInvalidBytesAreEscaped) {
  const std::vector<std::string> inputs = {
      std::string("a\0b", 3),
      "\x1b[31mred",
      "tab\there",
      "line\nbreak",
      "\x7f",
      "\xff\xfe",
      "\xc3",          // a lead byte without its continuation
      "\xc0\xaf",      // overlong '/'
      "\xed\xa0\x80",  // a UTF-16 surrogate
      "\xc2\x9b",      // C1 control (CSI)
  };
  for (const std::string& input : inputs) {
    const std::string shown = printable_text(input);
    EXPECT_TRUE(all_printable_ascii(shown)) << shown;
    EXPECT_NE(shown.find("\\x"), std::string::npos) << shown;
  }
  EXPECT_EQ(printable_text("\x1b"), "\\x1b");
}

TEST(PrintableText, LongExcerptsAreCut) {
  const std::string shown = printable_text(std::string(5000, 'a'));
  EXPECT_EQ(shown, std::string(kExcerptChars, 'a') + "...");
  // Escapes count as one character each, and are never cut in half.
  const std::string bytes = printable_text(std::string(100, '\x01'));
  EXPECT_EQ(bytes.size(), kExcerptChars * 4 + 3);
  EXPECT_EQ(printable_text(std::string(kExcerptChars, 'b')), std::string(kExcerptChars, 'b'));
  // The whole-line form cuts nothing.
  EXPECT_EQ(printable_line(std::string(500, 'c')), std::string(500, 'c'));
}

TEST(DecimalInt, PlainDecimalInRange) {
  EXPECT_EQ(read_decimal_int("0600", "--gbs", 1, 1000), 600);
  EXPECT_EQ(read_decimal_int("-5", "--x", -10, 10), -5);
  EXPECT_EQ(read_decimal_int("0", "--zero", 0, 3), 0);
  for (const char* bad : {"", "+8", "+", "-8", "8 ", " 8", "0x10", "1e3", "1.0", "eight", "-", "101",
                          "99999999999999999999999"}) {
    try {
      (void)read_decimal_int(bad, "--tp", 1, 100);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("--tp must be an integer from 1 to 100", 0), 0u) << message;
    }
  }
  try {
    (void)read_decimal_int("+8", "--gpus", 1, 100);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("without the '+'"), std::string::npos) << e.what();
  }
}

// One reading for every integer flag: the CLI11 options, sweep's lists and
// the flags commands read themselves accept and refuse the same words.
TEST(DecimalInt, EveryFlagReaderAgrees) {
  for (const std::string word :
       {"8", "0008", "+8", "-8", "0", "8.0", "1e3", "0x8", " 8", "8 ", "", "2147483647", "2147483648"}) {
    bool shared = true, cli = true, list = true;
    try {
      (void)read_decimal_int(word, "--gpus", 1, INT_MAX);
    } catch (const InputError&) {
      shared = false;
    }
    try {
      (void)parse_decimal_int(word, "--gpus", 1, INT_MAX);
    } catch (const CLI::ValidationError&) {
      cli = false;
    }
    try {
      (void)parse_int_list(word, "--gpus");
    } catch (const InputError&) {
      list = false;
    }
    EXPECT_EQ(shared, cli) << "'" << word << "'";
    // A list trims the spaces around its items.
    if (word.find(' ') == std::string::npos) {
      EXPECT_EQ(shared, list) << "'" << word << "'";
    }
  }
}

TEST(JsonErrorText, DropsTheLibraryPrefixKeepsThePosition) {
  try {
    const nlohmann::json parsed = nlohmann::json::parse("{\"a\": [1,\n 2 3]}");
    FAIL() << parsed.dump();
  } catch (const nlohmann::json::exception& e) {
    ASSERT_EQ(std::string(e.what()).find("[json.exception."), 0u) << e.what();
    const std::string text = json_error_text(e);
    EXPECT_EQ(text.find("json.exception"), std::string::npos) << text;
    EXPECT_NE(text.find("line 2"), std::string::npos) << text;
    EXPECT_NE(text.find("column"), std::string::npos) << text;
    EXPECT_NE(text.find("expected"), std::string::npos) << text;
  }
  // What the parser last read is the input's own bytes: escaped and cut.
  try {
    const nlohmann::json parsed = nlohmann::json::parse("[" + std::string(300, 'q') + "\x1b]");
    FAIL() << parsed.dump();
  } catch (const nlohmann::json::exception& e) {
    const std::string text = json_error_text(e);
    EXPECT_TRUE(all_printable_ascii(text)) << text;
    EXPECT_LT(text.size(), 200u) << text;
  }
}

}  // namespace
}  // namespace parplan
