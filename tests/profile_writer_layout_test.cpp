// calibrate --out edits the profile's text in place (its comments carry the
// sources). Whatever block layout the profile has (CRLF line ends, a list at
// its key's column as PyYAML writes it, 4-space indentation, a deprecated key
// spelling), the written profile must read back with the fitted values, and a
// layout the editor cannot handle is refused, never written half-edited.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/io/input_error.h"
#include "src/io/profile_writer.h"
#include "src/io/yaml_fields.h"

namespace parplan {
namespace {

const std::vector<FittedValue> kFitted = {
    {"gemm_efficiency_max", 0.7, 0.66},
    {"tiers[1].efficiency", 0.8, 0.711},
    {"overlap_compute_slowdown", 0.0, 0.05},  // absent from the profiles: inserted
};

void expect_fitted(const std::string& original) {
  const std::string text = calibrated_profile_text(original, kFitted, CalibrationBlock{}, "");
  const YAML::Node root = load_yaml_text(text, "written");
  EXPECT_DOUBLE_EQ(root["device"]["gemm_efficiency_max"].as<double>(), 0.66) << text;
  EXPECT_DOUBLE_EQ(root["device"]["overlap_compute_slowdown"].as<double>(), 0.05) << text;
  EXPECT_DOUBLE_EQ(root["tiers"][1]["efficiency"].as<double>(), 0.711) << text;
  EXPECT_DOUBLE_EQ(root["tiers"][0]["efficiency"].as<double>(), 0.9) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos);
}

TEST(ProfileWriterLayout, IndentedListTwoSpaces) {
  expect_fitted(
      "name: p\ndevice:\n  gemm_efficiency_max: 0.7  # source\ntiers:\n  - name: nvlink\n    efficiency: "
      "0.9\n"
      "  - name: ib\n    efficiency: 0.8\n");
}

TEST(ProfileWriterLayout, CrlfLineEnds) {
  expect_fitted(
      "name: p\r\ndevice:\r\n  gemm_efficiency_max: 0.7\r\ntiers:\r\n  - name: nvlink\r\n    efficiency: "
      "0.9\r\n"
      "  - name: ib\r\n    efficiency: 0.8\r\n");
}

TEST(ProfileWriterLayout, ListAtTheKeysColumn) {
  // PyYAML's default: the dashes at the column of "tiers:".
  expect_fitted(
      "name: p\ndevice:\n  gemm_efficiency_max: 0.7\ntiers:\n- name: nvlink\n  efficiency: 0.9\n- name: ib\n"
      "  efficiency: 0.8\nnodes: 4\n");
}

TEST(ProfileWriterLayout, FourSpaceIndentation) {
  expect_fitted(
      "name: p\ndevice:\n    gemm_efficiency_max: 0.7\ntiers:\n    -   name: nvlink\n        efficiency: "
      "0.9\n"
      "    -   name: ib\n        efficiency: 0.8\n");
}

TEST(ProfileWriterLayout, DeprecatedSpellingIsReplaced) {
  const std::string text = calibrated_profile_text("name: p\ndevice:\n  reserved_gb: 1.5\n",
                                                   {{"reserved_bytes", 1.5e9, 2.0 * (1 << 30)}}, {}, "");
  const YAML::Node device = load_yaml_text(text, "written")["device"];
  EXPECT_FALSE(device["reserved_gb"]) << text;
  EXPECT_DOUBLE_EQ(device["reserved_gib"].as<double>(), 2.0) << text;
}

TEST(ProfileWriterLayout, FlowStyleIsRefusedNotHalfWritten) {
  EXPECT_THROW(calibrated_profile_text("name: p\ndevice: {gemm_efficiency_max: 0.7}\n"
                                       "tiers: [{name: a, efficiency: 0.9}, {name: b, efficiency: 0.8}]\n",
                                       kFitted, {}, ""),
               InputError);
}

}  // namespace
}  // namespace parplan
