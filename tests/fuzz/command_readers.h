// The readers of the newer commands as the fuzz targets drive them, shared
// with the corpus replay test (tests/fuzz_corpus_test.cpp) so both run the
// same code. Each function reads one input and returns normally or throws
// InputError; anything else (another exception, a crash, a sanitizer
// report, a hang) is a bug in the reader.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>

#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "src/io/cluster_loader.h"
#include "src/io/expert_loads.h"
#include "src/io/input_error.h"
#include "src/io/megatron_log_reader.h"
#include "src/io/routing_stats.h"
#include "src/io/run_file_reader.h"
#include "src/io/scatter_input.h"
#include "src/io/skip_problem_loader.h"
#include "src/io/torchtitan_log_reader.h"
#include "src/io/torchtitan_python_config.h"
#include "tests/fuzz/fuzz_support.h"

namespace parplan::fuzz {

/// Runs every reader on the same input; rethrows the first InputError (with
/// its own message) once all have run.
inline void each_reader(std::initializer_list<std::function<void()>> readers) {
  std::optional<InputError> first;
  for (const auto& read : readers) {
    try {
      read();
    } catch (const InputError& e) {
      if (!first) first = e;
    }
  }
  if (first) throw *first;
}

/// Routing statistics (experts --loads, --routing-stats): the JSON/CSV
/// reader, the imbalance figures, and --routing-stats against a MoE model
/// with as many experts as the file has.
inline void read_routing_stats(const std::string& text) {
  const ExpertLoads loads = parse_expert_loads(text, "fuzz");
  (void)routing_imbalance(loads);
  for (int ep = 1; ep <= loads.experts() && ep <= 64; ++ep)
    if (loads.experts() % ep == 0) (void)contiguous_ep_imbalance(loads, ep);
  ModelSpec model;
  model.name = "fuzz-moe";
  model.experts = loads.experts();
  JobSpec job;
  apply_routing_stats(scratch_file(text, "-loads.csv"), model, job);
}

/// scatter's sequence lengths, its coefficients JSON and a --group-sizes
/// list (the input's first line).
inline void read_scatter_input(const std::string& text) {
  each_reader({[&] { (void)parse_scatter_lengths(text, "fuzz"); },
               [&] { (void)parse_scatter_coefficients(text, "fuzz"); },
               [&] {
                 (void)parse_group_sizes(text.substr(0, std::min(text.find('\n'), std::size_t{256})),
                                         "--group-sizes");
               }});
}

/// A skip-paths problem file (YAML or JSON).
inline void read_skip_problem(const std::string& text) {
  (void)load_skip_problem(scratch_file(text, "-skip.yaml"));
}

/// calibrate --runs: the same bytes as a YAML run file, a CSV run file and a
/// Megatron-LM log, against the dgx-h100 profile.
/// A torchtitan metrics log the job-config readers are driven beside.
inline const std::string kTorchtitanLog =
    "step: 10  loss: 1.0  memory: 10.00GiB(12.00%)  tps: 1,000  tflops: 1.0  mfu: 1.0%\n"
    "step: 20  loss: 1.0  memory: 10.00GiB(12.00%)  tps: 1,000  tflops: 1.0  mfu: 1.0%\n";

inline void read_run_files(const std::string& text) {
  static const ClusterSpec cluster = load_cluster("dgx-h100");
  each_reader({[&] { (void)read_run_yaml(scratch_file(text, "-runs.yaml"), cluster); },
               [&] { (void)read_run_csv(scratch_file(text, "-runs.csv"), cluster); },
               [&] { (void)parse_megatron_log(text, "fuzz.log", cluster); },
               // torchtitan: the text as a job config (TOML, Python) beside a
               // fixed metrics log, and as the log beside an empty TOML.
               [&] { (void)parse_torchtitan_python_config(text, "fuzz.py"); },
               [&] {
                 (void)parse_torchtitan_log(kTorchtitanLog, text, "", "fuzz.log", cluster,
                                            TorchtitanJobFormat::kPython);
               },
               [&] {
                 (void)parse_torchtitan_log(kTorchtitanLog, text, "", "fuzz.log", cluster,
                                            TorchtitanJobFormat::kToml);
               },
               [&] { (void)parse_torchtitan_log(text, "", "", "fuzz.log", cluster); }});
}

}  // namespace parplan::fuzz
