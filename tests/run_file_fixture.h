// Shared by the run-file key tests: a one-run YAML file in the temp
// directory, one per process (ctest runs the tests as parallel processes),
// and the check that a bad value is an InputError naming its field.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/run_file_reader.h"

namespace parplan::run_file_test {

/// The held-out published runs (calibration/heldout-published-runs.yaml).
inline std::string heldout_path() {
  return (data_dir() / "calibration/heldout-published-runs.yaml").string();
}

/// A torchtitan run of Llama 3 8B on 8 GPUs (FSDP, no checkpointing), for
/// the tests of keys that override the engine's recipe.
inline constexpr const char* kTorchtitanLlamaRun =
    "name: r, model: llama3-8b, gpus: 8, gbs: 32, seq: 8192, engine: torchtitan, step_s: 10, "
    "config: {tp: 1, pp: 1, mbs: 2, zero: 3, recompute: none}";

/// Writes `runs: [{fields}]` to a file named after `tag` and this process.
inline std::string write_one_run(const std::string& tag, const std::string& fields) {
  const std::string name = "parplan_" + tag + "_" + std::to_string(::getpid()) + ".yaml";
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << "runs:\n  - {" << fields << "}\n";
  return path;
}

/// The one run of a run file holding `fields` (write_one_run), read as a
/// run file is against `cluster`.
inline FitRun read_one_run(const std::string& tag, const std::string& fields, const ClusterSpec& cluster) {
  return read_run_yaml(write_one_run(tag, fields), cluster).front();
}

/// A reader of one-run files that share `fields` and differ only by what
/// the test appends (", key: value" for the key under test).
inline auto run_with(const std::string& tag, const std::string& fields, const ClusterSpec& cluster) {
  return [tag, fields, &cluster](const std::string& extra) {
    return read_one_run(tag, fields + extra, cluster);
  };
}

/// `read()` must throw an InputError whose message names `field`.
template <class Read>
void expect_error_naming(Read read, const std::string& field) {
  try {
    read();
    ADD_FAILURE() << field << ": a bad value was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

}  // namespace parplan::run_file_test
